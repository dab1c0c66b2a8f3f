import { Agent, setGlobalDispatcher } from 'undici';

/**
 * Node's fetch gives up on a reply whose headers have not come within 300 s, or whose body pauses as long
 * (undici's own defaults, below any command's timeout): `lintel backups apply` of a large backup, which the
 * spec gives an hour, failed at five minutes with "fetch failed" (UND_ERR_HEADERS_TIMEOUT) while the server
 * was still applying. The CLI's requests are bounded by each command's own timeout (the ApiClient aborts
 * them), so the connection's own bounds are off.
 */
export function useCommandTimeoutsOnly(): void {
  setGlobalDispatcher(new Agent({ headersTimeout: 0, bodyTimeout: 0 }));
}
