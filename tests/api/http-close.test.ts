/**
 * Closing the server lets the replies under way finish, but not for ever: a client that stopped reading a
 * large reply (a browser tab frozen on the console's bundle, a script stuck on an export) holds its
 * connection's write open. The close ends such connections after its grace instead of waiting on them.
 */
import fs from 'node:fs';
import path from 'node:path';
import http from 'node:http';
import { expect, it } from 'vitest';
import { startTestServer } from '../support/server';

const SIZE = 64 * 1024 * 1024;

it('closes while a client leaves a large reply unread', async () => {
  const ts = await startTestServer();
  const dir = path.join(ts.server.context.config.storageDir, 'avatars');
  fs.mkdirSync(dir, { recursive: true });
  // far more than the sockets' buffers hold: the server's write waits on the reader
  fs.writeFileSync(path.join(dir, 'large.jpg'), Buffer.alloc(SIZE, 0xff));
  const url = new URL(`${ts.url}/storage/avatars/large.jpg`);
  const res = await new Promise<http.IncomingMessage>((resolve, reject) =>
    http.get(url, resolve).on('error', reject),
  );
  expect(res.statusCode).toBe(200);
  res.pause();
  await ts.close();
  // the reply was cut, not completed: reading on, the client gets the end of its connection, not the file
  let received = 0;
  res.on('data', (chunk: Buffer) => (received += chunk.length));
  const closed = new Promise((resolve) => res.on('close', resolve));
  res.resume();
  await closed;
  expect(received).toBeLessThan(SIZE);
}, 60_000);
