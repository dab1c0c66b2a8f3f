import http from 'node:http';
import https from 'node:https';

/**
 * One JSON-RPC call to Kamailio over HTTP (its xhttp and jsonrpcs modules), on a connection of its own.
 *
 * Kamailio closes the connection as soon as it has answered, without saying so (no `Connection: close`).
 * fetch kept such a connection for the next call, and a call sent on it before its close had been read
 * failed before any answer ("other side closed"); the one retry took another kept connection, as dead as the
 * first. A SIP restart then answered "failed" (loadBans after loadCredentials: one sequence of three SIP files
 * in 27 under load) and a number's credentials could stay out of Kamailio. A connection a call is what
 * Kamailio serves anyway: nothing is kept, so nothing kept can be dead (docs/decisions.md "Kamailio restarted
 * only once its old processes are gone"). A JSON-RPC error, an answer that is not JSON-RPC, a failed
 * connection or no answer within `timeoutMs` is thrown.
 */
export function kamailioRpc<T = unknown>(
  url: string,
  timeoutMs: number,
  method: string,
  params: unknown[] = [],
): Promise<T> {
  const body = JSON.stringify({ jsonrpc: '2.0', method, params, id: 1 });
  const target = new URL(url);
  return new Promise<string>((resolve, reject) => {
    const req = (target.protocol === 'https:' ? https : http).request(
      target,
      {
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        signal: AbortSignal.timeout(timeoutMs),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  }).then((text) => {
    let answer: { result?: T; error?: { code: number; message: string } };
    try {
      answer = JSON.parse(text) as typeof answer;
    } catch {
      throw new Error(`kamailio ${method}: not a JSON-RPC answer`);
    }
    if (answer.error) throw new Error(`kamailio ${method}: ${answer.error.code} ${answer.error.message}`);
    return answer.result as T;
  });
}
