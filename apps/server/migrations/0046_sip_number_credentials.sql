-- Virtual numbers that register (issue 22): the SIP password as Kamailio checks it — the HA1 digest of
-- `number:realm:password` and the realm it was made for, never the password itself — and whether the number
-- may register at all.
alter table sip_numbers add column password_ha1 text;
alter table sip_numbers add column ha1_realm text;
alter table sip_numbers add column is_active boolean not null default true;
