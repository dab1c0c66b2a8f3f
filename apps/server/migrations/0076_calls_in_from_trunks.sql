-- Telephony (issue 22): calls to numbers that do not exist, and calls in from a SIP trunk.
--
-- Why a call went nowhere, when the routing refused it (the spec's SIP cause `wrong_number`: a number Lintel
-- does not hold; `own_number`, `inactive`): null for a call that was routed.
alter table call_history add column reason text;
-- The SIP trunk a call came in from or went out through (null: between numbers).
alter table call_history add column trunk_id integer references sip_trunks(id) on delete set null;
alter table sip_calls add column trunk_id integer references sip_trunks(id) on delete set null;
