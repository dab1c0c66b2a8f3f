/**
 * The SIP headers of the dialer's calls (spec part 2 §7 "SIP signalling": the outgoing INVITE carries the
 * speech id; incoming INVITEs give the speech id, the speech type, the target callee and an SOS flag). The
 * spec does not name them: these are ours, and the platform's routing sets the incoming ones.
 */
export const SpeechHeaders = {
  speechId: 'X-Speech-Id',
  speechType: 'X-Speech-Type',
  targetCallee: 'X-Target-Callee',
  sos: 'X-Sos',
} as const;

/** Whether an SOS header's value means an SOS call (`1`, `true`, `yes`). */
export const isSosFlag = (value: string | undefined | null): boolean =>
  !!value && /^(1|true|yes)$/i.test(value.trim());

/**
 * Joining a waiting call (docs/decisions.md "The dialer joins a waiting call"): a SIP MESSAGE to this user at
 * the SIP server's domain, naming the call's speech id in `SpeechHeaders.speechId`. The SIP server answers 202
 * and sends the held INVITE (the same speech id) to the phone, which answers it by itself; 403 a number that
 * may not intercept, 404 no such waiting call (ended, or taken by another concierge).
 */
export const JoinMessage = { user: 'join', contentType: 'text/plain', body: 'join' } as const;
