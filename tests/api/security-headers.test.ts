/**
 * Issue 12 point 12: security headers on the console, the API and /storage/: a content security policy
 * without inline script, no framing, nosniff, a strict referrer policy; an uploaded file never runs as a page.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server';
import { ensureBuilt, webDist } from '../support/web';

let ts: TestServer;
beforeAll(async () => {
  ensureBuilt();
  ts = await startTestServer({ webDir: webDist });
  // files as an upload leaves them, and one that would be a page if a browser sniffed or rendered it
  const dir = path.join(ts.server.context.config.storageDir, 'avatars');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'face.jpg'), Buffer.from([0xff, 0xd8, 0xff, 0xe0]));
  fs.writeFileSync(path.join(dir, 'page.html'), '<script>alert(document.cookie)</script>');
}, 180_000);
afterAll(async () => {
  await ts?.close();
});

function directives(csp: string | null): Map<string, string[]> {
  return new Map(
    (csp ?? '')
      .split(';')
      .map((d) => d.trim().split(/\s+/))
      .filter((d) => d[0])
      .map(([name, ...values]) => [name!, values]),
  );
}

function expectCommon(res: Response, where: string) {
  expect(res.headers.get('x-content-type-options'), where).toBe('nosniff');
  expect(res.headers.get('referrer-policy'), where).toBe('no-referrer');
  expect(res.headers.get('x-frame-options'), where).toBe('DENY');
  const csp = directives(res.headers.get('content-security-policy'));
  expect(csp.get('frame-ancestors'), where).toEqual(["'none'"]);
  return csp;
}

describe('security headers', () => {
  it('the console: a policy with scripts from its own origin only, never framed', async () => {
    for (const page of ['/', '/users', '/login']) {
      const res = await fetch(`${ts.url}${page}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/text\/html/);
      const html = await res.text();
      // the built page loads its scripts from files: nothing inline that the policy would have to allow
      expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
      const csp = expectCommon(res, page);
      expect(csp.get('script-src')).toEqual(["'self'"]);
      expect(csp.get('default-src')).toEqual(["'self'"]);
      expect(csp.get('object-src')).toEqual(["'none'"]);
      expect(csp.get('connect-src')).toEqual(["'self'"]);
      expect([...csp.values()].flat()).not.toContain("'unsafe-inline'");
      expect([...csp.values()].flat()).not.toContain("'unsafe-eval'");
    }
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(await (await fetch(`${ts.url}/`)).text())![1]!;
    expectCommon(await fetch(`${ts.url}${script}`), script);
  });

  it('the API: replies, errors and unknown routes', async () => {
    const ok = await fetch(`${ts.url}/api/v0/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ login: ts.adminLogin, password: ts.adminPassword }),
    });
    expect(ok.status).toBe(200);
    expectCommon(ok, 'login');
    const unauthenticated = await fetch(`${ts.url}/api/v0/profile`);
    expect(unauthenticated.status).toBe(401);
    expectCommon(unauthenticated, 'profile without a token');
    const bad = await fetch(`${ts.url}/api/v0/login`, {
      method: 'POST',
      headers: { 'content-type': 'multipart/form-data' },
      body: 'x',
    });
    expect(bad.status).toBe(400);
    expectCommon(bad, 'malformed body');
    const missing = await fetch(`${ts.url}/api/v0/no-such-route`);
    expect(missing.status).toBe(404);
    expectCommon(missing, 'unknown route');
  });

  it('/storage/: an image is shown, anything else downloads, and nothing stored can run', async () => {
    const image = await fetch(`${ts.url}/storage/avatars/face.jpg`);
    expect(image.status).toBe(200);
    expect(image.headers.get('content-type')).toBe('image/jpeg');
    expect(image.headers.get('content-disposition')).toBeNull();
    const csp = expectCommon(image, 'stored image');
    expect(csp.get('default-src')).toEqual(["'none'"]);
    expect(csp.has('sandbox')).toBe(true);

    const page = await fetch(`${ts.url}/storage/avatars/page.html`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-disposition')).toBe('attachment');
    const pageCsp = expectCommon(page, 'stored html');
    expect(pageCsp.get('default-src')).toEqual(["'none'"]);
    expect(pageCsp.has('sandbox')).toBe(true);

    expectCommon(await fetch(`${ts.url}/storage/avatars/none.jpg`), 'missing stored file');
  });
});
