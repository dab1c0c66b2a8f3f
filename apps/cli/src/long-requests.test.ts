import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient } from './api';

const dispatcherKey = Symbol.for('undici.globalDispatcher.1');
const dispatcher = () => (globalThis as Record<symbol, unknown>)[dispatcherKey];

let server: http.Server;
let url: string;

beforeAll(async () => {
  server = http.createServer((_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end('{"ok":true}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe("the HTTP connection's own bounds", () => {
  it('stay for a request its timeout ends first; are lifted (undici loaded) for a longer one and for streams', async () => {
    const api = apiClient(url);
    expect(await api.request('GET', '/a', { auth: false })).toEqual({ ok: true });
    const before = dispatcher();
    // Node's own (its fetch's), set by the first request
    expect(before).toBeDefined();
    expect(await isNpmAgent(before)).toBe(false);
    expect(await api.request('GET', '/a', { auth: false, timeoutMs: 60_000 })).toEqual({ ok: true });
    expect(dispatcher()).toBe(before);
    // an hour (backups apply): undici's 300 s on the reply's headers would cut it first
    expect(await api.request('GET', '/a', { auth: false, timeoutMs: 3_600_000 })).toEqual({ ok: true });
    const lifted = dispatcher();
    expect(lifted).not.toBe(before);
    expect(await isNpmAgent(lifted)).toBe(true);
    // once for the process: a stream after it keeps the same
    const res = await api.openStream('GET', '/a', { auth: false });
    expect(await res.json()).toEqual({ ok: true });
    expect(dispatcher()).toBe(lifted);
  });
});

async function isNpmAgent(v: unknown): Promise<boolean> {
  const { Agent } = await import('undici');
  return v instanceof Agent;
}
