-- The MQTT broker's settings (issue 24 item 2; spec part 2 §7 "broker GET and POST multipart"): the TLS
-- certificate and private key the embedded broker serves mqtts:// with. Installation-wide, like the broker and
-- its topic space: one row. The key is a secret: never returned, never logged.
create table broker_settings (
  id boolean primary key default true check (id),
  -- PEM: the certificate, its chain after it
  certificate text not null,
  private_key text not null,
  updated_by integer references users(id) on delete set null,
  updated_at timestamptz not null
);
