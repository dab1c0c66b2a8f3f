/**
 * Node's fetch gives up on a reply whose headers have not come within 300 s, or whose body pauses as long
 * (undici's own defaults, below any command's timeout): `lintel backups apply` of a large backup, which the
 * spec gives an hour, failed at five minutes with "fetch failed" (UND_ERR_HEADERS_TIMEOUT) while the server
 * was still applying. The CLI's requests are bounded by each command's own timeout (the ApiClient aborts
 * them), so the connection's own bounds are lifted for every request they could cut: one whose timeout is
 * longer (or none), and a reply read as it arrives (an export, a watch). undici (the library Node's fetch is
 * built on) is loaded for that only: most commands never need it, and loading it cost about 60 ms of CPU at
 * every start.
 */
export const CONNECTION_BOUND_MS = 300_000;

let lifted: Promise<void> | null = null;

export function liftConnectionBounds(request: { timeoutMs: number; stream: boolean }): Promise<void> | void {
  if (!request.stream && request.timeoutMs > 0 && request.timeoutMs < CONNECTION_BOUND_MS) return;
  lifted ??= import('undici').then(({ Agent, setGlobalDispatcher }) =>
    setGlobalDispatcher(new Agent({ headersTimeout: 0, bodyTimeout: 0 })),
  );
  return lifted;
}
