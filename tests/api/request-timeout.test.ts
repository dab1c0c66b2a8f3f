/**
 * A request must arrive whole within the request timeout (LINTEL_HTTP_REQUEST_TIMEOUT_MS), or its connection
 * is closed with a 408 (issue 20, item 1) — but not a streamed import's body (NDJSON), which is read at the
 * server's pace for as long as its import checks and inserts: a 1,000,000-row one-request users import was cut
 * at 120 s. A streamed body is bounded by the idle timeout instead. Nothing is timed: the stream is held open
 * until a trickled body sent after it has been cut.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { startTestServer, type TestServer } from '../support/server';
import { admin, group, rootGroup, tokenOf, uid } from '../support/fixtures';

let ts: TestServer;
let api: ApiClient;
let groupId: number;
/** a server whose idle timeout is short: a stream that stops coming is closed */
let quick: TestServer;

beforeAll(async () => {
  [ts, quick] = await Promise.all([
    startTestServer({
      config: { http: { requestTimeoutMs: 500, idleTimeoutMs: 60_000, maxConnectionsPerAddress: 64 } },
    }),
    startTestServer({
      config: { http: { requestTimeoutMs: 60_000, idleTimeoutMs: 1_000, maxConnectionsPerAddress: 64 } },
    }),
  ]);
  api = await admin(ts);
  groupId = await group(api, `Timeout ${uid()}`, await rootGroup(api));
});
afterAll(async () => {
  await Promise.all([ts?.close(), quick?.close()]);
});

/** How many rows of the import the server has staged: it reads the stream. */
async function staged(server: TestServer, id: string): Promise<number> {
  const { rows } = await sql<{
    n: number;
  }>`select count(*)::int as n from user_import_rows where import_id = ${id}`.execute(
    server.server.context.db,
  );
  return rows[0]!.n;
}

/** A body promised whole (its length) and never finished: what the server answers, once it closes. */
function trickled(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () =>
      socket.write(
        'POST /api/v0/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
          'Content-Length: 100\r\n\r\n{"login":',
      ),
    );
    let got = '';
    socket.on('data', (d) => (got += d.toString()));
    socket.on('close', () => resolve(got));
    socket.on('error', reject);
  });
}

describe('the whole-request timeout', () => {
  it('cuts a body that does not arrive in time, and not a streamed import that lasts longer', async () => {
    const tag = uid();
    const role = (await getCommand('role.list').run({ api }, { limit: 1 })).data[0]!;
    const row = (i: number) =>
      JSON.stringify({
        line: i + 2,
        login: `t${i}.${tag}`,
        name: `Timed ${i}`,
        role: role.name,
        domains: String(groupId),
      }) + '\n';
    const { id } = await getCommand('user.import_start').run({ api }, { file_name: 'timeout.ndjson' });
    let send!: ReadableStreamDefaultController<Uint8Array>;
    const body = new ReadableStream<Uint8Array>({ start: (c) => void (send = c) });
    const enc = new TextEncoder();
    send.enqueue(enc.encode(row(0)));
    const reply = fetch(`${ts.url}/api/v0/users/import/${id}/stream?batch=1`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokenOf(api)}`, 'content-type': 'application/x-ndjson' },
      body,
      duplex: 'half',
    } as RequestInit);
    // the server reads the stream: its first row is staged
    for (;;) {
      if ((await staged(ts, id)) > 0) break;
      await new Promise((r) => setImmediate(r));
    }
    // a body sent after it, and never finished, is cut with a 408 ...
    const port = Number(new URL(ts.url).port);
    expect(await trickled(port)).toMatch(/^HTTP\/1\.1 408 /);
    // ... while the stream, open longer, is still read: the rest of its rows, then its end
    for (let i = 1; i < 5; i++) send.enqueue(enc.encode(row(i)));
    send.close();
    const res = await reply;
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id, rows: 5, valid: 5, invalid: 0 });
  });

  it('closes a streamed body that stops coming, after the idle timeout, and commits nothing of it', async () => {
    const quickApi = await admin(quick);
    const role = (await getCommand('role.list').run({ api: quickApi }, { limit: 1 })).data[0]!;
    const tag = uid();
    const { id } = await getCommand('user.import_start').run(
      { api: quickApi },
      { file_name: 'stalled.ndjson' },
    );
    const body = new ReadableStream<Uint8Array>({
      start: (c) =>
        c.enqueue(
          new TextEncoder().encode(
            JSON.stringify({ line: 2, login: `stalled.${tag}`, name: 'Stalled', role: role.name }) + '\n',
          ),
        ),
    });
    // one row, then nothing, the stream never ended: the connection is closed, the request fails
    const reply = fetch(
      `${quick.url}/api/v0/users/import/${id}/stream?batch=1&commit=${encodeURIComponent('{"continue_on_error":true}')}`,
      {
        method: 'POST',
        headers: { authorization: `Bearer ${tokenOf(quickApi)}`, 'content-type': 'application/x-ndjson' },
        body,
        duplex: 'half',
      } as RequestInit,
    );
    await expect(reply.then((r) => r.status)).rejects.toThrow();
    const users = await getCommand('user.list').run({ api: quickApi }, { search: `stalled.${tag}` } as never);
    expect(users.data).toHaveLength(0);
  });
});
