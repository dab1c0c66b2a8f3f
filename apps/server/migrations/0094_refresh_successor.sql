-- A refresh whose reply was lost (the tab reloaded while it was on its way, the network dropped it) had used
-- its single-use token: every tab holding it was then signed out. The pair a refresh gave is kept with the
-- token it replaced, sealed with a key only that token makes (auth/crypto.ts `sealFor`), and answered again
-- to the same token within the reuse grace (auth/sessions.ts `rotateRefresh`).
alter table used_refresh_tokens add column successor text;
