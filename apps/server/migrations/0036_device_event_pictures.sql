-- Issue 20 item 6: event pictures within a quota, per device and in all. A picture's size is kept on its
-- event (so the retention gives it back when it deletes the event), and what is stored is counted in two
-- tables the transaction that stores a picture updates — not by summing the journal at each push. The
-- total is one row, locked first by whoever changes a count (a push with pictures, the retention), so the
-- check and the change are one step for every device at once.
alter table device_events add column image_bytes integer;
create table device_picture_usage (
  device_id integer primary key references devices(id) on delete cascade,
  bytes bigint not null default 0
);
create table device_picture_total (
  id boolean primary key default true check (id),
  bytes bigint not null default 0
);
insert into device_picture_total (id, bytes) values (true, 0);
-- a picture's event, found by its file name (whoever asks for a picture must be able to read its event)
create index device_events_image on device_events (image) where image is not null;
