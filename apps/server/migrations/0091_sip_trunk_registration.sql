-- Telephony (issue 22 item 4): whether Lintel's SIP server registers with the trunk's provider (the provider's
-- registrar at the termination URI's host, as the trunk's login): providers that send calls in to a
-- registered contact need it; those that know us by our address do not. Off for the trunks there are.
alter table sip_trunks add column register boolean not null default false;
