import http from 'node:http';

/**
 * `POST /api/v0/login` from a loopback address of the test's choice (127.0.0.x), so each case of address
 * blocking has an address of its own. Answers the status and the parsed body.
 */
export function loginFrom(
  baseUrl: string,
  from: string,
  login: string,
  password: string,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const u = new URL(`${baseUrl}/api/v0/login`);
  const body = JSON.stringify({ login, password });
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: 'POST',
        localAddress: from,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : {} }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
