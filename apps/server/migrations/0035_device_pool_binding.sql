-- Issue 20 item 7: a pool entry is bound to what first announced it — the SHA-256 of the password its
-- heartbeat carried; a later heartbeat changes the entry (its address, firmware, last contact) only with the
-- same password, so an anonymous caller cannot point a waiting device at another address.
alter table device_pool add column secret_sha256 text;
