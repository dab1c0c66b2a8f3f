-- Telephony (issue 22 items 5, 6, 8): where calls go, the calls the SIP server carries, and their history.
--
-- A virtual number's owner and forwarding (spec part 1 §3 "Virtual SIP number": user, device, forward_group,
-- forward_mode disabled | manual | picked) are what the routing reads; its forward rules come with their
-- family (0061).
alter table sip_numbers add column user_id integer references users(id) on delete set null;
alter table sip_numbers add column device_id integer references devices(id) on delete set null;
alter table sip_numbers add column forward_mode text not null default 'disabled';
alter table sip_numbers add column forward_group_id integer references domains(id) on delete set null;
create index sip_numbers_number on sip_numbers (number);

-- The server calls (spec part 1 §3 "Server call"): one row per call the SIP server asked Lintel about, keyed
-- by the SIP Call-ID; `speech_id` is the id the console knows it by (the INVITE's X-Speech-Id, else made from
-- the Call-ID). Status new | calling | answered | waiting | answered_waiting | destroyed.
create table sip_calls (
  id bigint generated always as identity primary key,
  project_id integer not null references projects(id) on delete cascade,
  call_id text not null unique,
  speech_id text not null,
  status text not null default 'new',
  type text not null default 'normal',
  caller text not null,
  callee text not null,
  answered_by text,
  -- the numbers rung now, and the plan the routing answered (its steps, as the SIP server reads them)
  ringing jsonb not null default '[]'::jsonb,
  plan text not null default '',
  via text not null default 'direct',
  -- the dialog's handle in the SIP server once answered (dlg.end_dlg), and the INVITE's CSeq (to cancel it)
  h_entry bigint,
  h_id bigint,
  cseq text,
  info jsonb not null default '{}'::jsonb,
  created_at timestamptz not null default now(),
  answered_at timestamptz,
  ended_at timestamptz
);
create index sip_calls_live on sip_calls (project_id, created_at desc) where ended_at is null;
create index sip_calls_speech on sip_calls (speech_id);

-- The call history (spec part 1 §3 "History item", §4 call results): a journal, one row per ended call,
-- keyset by (created_at, id) like the device events.
create table call_history (
  id integer generated always as identity primary key,
  project_id integer not null references projects(id) on delete cascade,
  created_at timestamptz not null default now(),
  ended_at timestamptz not null default now(),
  from_number text not null,
  to_number text not null,
  answered_by text,
  -- answered | cancel | busy | noanswer | failed
  status text not null,
  -- incoming | outgoing (outgoing: through a SIP trunk)
  direction text not null default 'incoming',
  -- seconds of talk (0 when not answered)
  duration integer not null default 0,
  call_id text not null unique
);
create index call_history_project_time on call_history (project_id, created_at desc, id desc);
create index call_history_project_from on call_history (project_id, from_number, created_at desc, id desc);
create index call_history_project_to on call_history (project_id, to_number, created_at desc, id desc);
