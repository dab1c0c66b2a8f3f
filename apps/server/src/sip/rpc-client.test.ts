import http from 'node:http';
import type net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kamailioRpc } from './rpc-client';

/**
 * An HTTP server answering JSON-RPC as Kamailio does: one answer a connection, without `Connection: close`
 * (Kamailio 5.6's xhttp closes it just after). A request sent on a connection already answered is met by the
 * connection's end, with no answer: what a client sees when it sent before it had read Kamailio's close (under
 * load), made certain here. It counts the connections and requests it was given.
 */
let server: http.Server;
let url: string;
let hang = false;
/** resolved when a request the server hangs on has been read (set by a test) */
let hungArrived: (() => void) | null = null;
let failWith: { code: number; message: string } | null = null;
let connections = 0;
let requests = 0;
const open = new Set<net.Socket>();
const answered = new WeakSet<net.Socket>();

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      requests++;
      if (answered.has(req.socket)) return req.socket.destroy();
      answered.add(req.socket);
      if (hang) return hungArrived?.();
      const { method } = JSON.parse(body) as { method: string };
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify(
          failWith
            ? { jsonrpc: '2.0', error: failWith, id: 1 }
            : { jsonrpc: '2.0', result: `answer to ${method}`, id: 1 },
        ),
      );
    });
  });
  server.on('connection', (s: net.Socket) => {
    connections++;
    open.add(s);
    s.on('close', () => open.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/RPC`;
});

afterAll(async () => {
  for (const s of open) s.destroy();
  await new Promise((r) => server.close(r));
});

describe("Kamailio's JSON-RPC client", () => {
  it('each call on a connection of its own: a server that answers once a connection answers every call', async () => {
    connections = 0;
    requests = 0;
    const answers: string[] = [];
    // calls at once and in a row, as a console's status and a start's loads make them
    answers.push(
      ...(await Promise.all(
        Array.from({ length: 20 }, () => kamailioRpc<string>(url, 5_000, 'stats.get_statistics')),
      )),
    );
    for (let i = 0; i < 50; i++) answers.push(await kamailioRpc<string>(url, 5_000, 'htable.sets', ['t', i]));
    expect(answers.filter((a) => a === 'answer to htable.sets')).toHaveLength(50);
    expect(answers.filter((a) => a === 'answer to stats.get_statistics')).toHaveLength(20);
    // no connection was used twice
    expect(connections).toBe(70);
    expect(requests).toBe(70);
  });

  it('a JSON-RPC error is thrown with its code and message', async () => {
    failWith = { code: 500, message: 'no such table' };
    await expect(kamailioRpc(url, 5_000, 'htable.flush', ['nope'])).rejects.toThrow(
      'kamailio htable.flush: 500 no such table',
    );
    failWith = null;
  });

  it('no answer in time is thrown, sent once; no server at all is thrown', async () => {
    hang = true;
    requests = 0;
    // the server reads it however late its event loop comes to it (the client may give up first)
    const arrived = new Promise<void>((r) => (hungArrived = r));
    await expect(kamailioRpc(url, 200, 'core.version')).rejects.toMatchObject({ name: 'AbortError' });
    await arrived;
    expect(requests).toBe(1);
    hang = false;
    for (const s of open) s.destroy();
    const gone = http.createServer();
    await new Promise<void>((r) => gone.listen(0, '127.0.0.1', r));
    const port = (gone.address() as net.AddressInfo).port;
    await new Promise((r) => gone.close(r));
    await expect(kamailioRpc(`http://127.0.0.1:${port}/RPC`, 5_000, 'core.version')).rejects.toMatchObject({
      code: 'ECONNREFUSED',
    });
  });
});
