/**
 * Issue 12 point 11: the edges of a request body on EVERY route of the registry that takes one, public and
 * session ones: a multipart without a boundary, a multipart cut off, a multipart field over the field size, a
 * content type no route takes, a body over the limit. Each is a 4xx with a catalogue code, never a 500.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCommand, registry, type Command } from '@lintel/commands';
import { ErrorCatalogue, NOT_AUTHORIZED_CODE } from '@lintel/core';
import { startTestServer, type TestServer } from '../support/server';

let ts: TestServer;
let token = '';
beforeAll(async () => {
  ts = await startTestServer();
  token = (
    await getCommand('session.login').run(
      { api: ts.client() },
      { login: ts.adminLogin, password: ts.adminPassword },
    )
  ).sessions[0]!.token;
});
afterAll(async () => {
  await ts?.close();
});

const known = new Set([...Object.keys(ErrorCatalogue), NOT_AUTHORIZED_CODE]);
// the commands that end the session go last, so that one of them answering 2xx could not hide the others
const ending = new Set(['session.logout', 'profile.delete']);
const withBody = [...registry.values()]
  .filter((c) => c.argsIn === 'body')
  .sort((a, b) => Number(ending.has(a.id)) - Number(ending.has(b.id)));

const B = 'lintel-edge-boundary';
const edges: { name: string; contentType: string; body: () => string; status: number; code: string }[] = [
  {
    name: 'multipart without a boundary',
    contentType: 'multipart/form-data',
    body: () => `--${B}\r\n`,
    status: 400,
    code: 'invalid_data_sent',
  },
  {
    name: 'multipart cut off inside a part',
    contentType: `multipart/form-data; boundary=${B}`,
    body: () => `--${B}\r\nContent-Disposition: form-data; name="name"\r\n\r\nhalf a val`,
    status: 400,
    code: 'invalid_data_sent',
  },
  {
    name: 'multipart field over the field size',
    contentType: `multipart/form-data; boundary=${B}`,
    body: () =>
      `--${B}\r\nContent-Disposition: form-data; name="name"\r\n\r\n${'x'.repeat(1024 * 1024 + 10)}\r\n--${B}--\r\n`,
    status: 413,
    code: 'payload_too_large',
  },
  {
    name: 'a content type no route takes',
    contentType: 'text/plain',
    body: () => 'hello',
    status: 415,
    code: 'invalid_data_sent',
  },
  {
    name: 'JSON over the body limit',
    contentType: 'application/json',
    body: () => JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) }),
    status: 413,
    code: 'payload_too_large',
  },
];

function url(cmd: Command): string {
  return `${ts.url}/api/v0${cmd.http.path.replace(/:([A-Za-z_]+)/g, '1')}`;
}

describe('bad request bodies on every route that takes one', () => {
  it('the registry has public and session routes with a body', () => {
    expect(withBody.some((c) => c.access === 'public')).toBe(true);
    expect(withBody.some((c) => c.access === 'session')).toBe(true);
  });

  for (const edge of edges) {
    it(`${edge.name}: a 4xx with a catalogue code`, async () => {
      const seen: string[] = [];
      for (const cmd of withBody) {
        const res = await fetch(url(cmd), {
          method: cmd.http.method,
          headers: { authorization: `Bearer ${token}`, 'content-type': edge.contentType },
          body: edge.body(),
        });
        const text = await res.text();
        const body = JSON.parse(text) as { error_code?: string };
        const where = `${cmd.id} (${cmd.http.method} ${cmd.http.path}): ${res.status} ${text.slice(0, 200)}`;
        expect(res.status, where).toBeGreaterThanOrEqual(400);
        expect(res.status, where).toBeLessThan(500);
        expect(known.has(body.error_code ?? ''), where).toBe(true);
        // a gate (permission, licence) may answer first on a session route; a public route reaches the body
        if (cmd.access === 'public')
          expect({ status: res.status, code: body.error_code }, where).toEqual({
            status: edge.status,
            code: edge.code,
          });
        if (res.status === edge.status && body.error_code === edge.code) seen.push(cmd.id);
      }
      // the body's own answer, not a gate's, on nearly every route
      expect(seen.length, `answered ${edge.code} on ${seen.length} of ${withBody.length}`).toBeGreaterThan(
        withBody.length * 0.8,
      );
    });
  }
});
