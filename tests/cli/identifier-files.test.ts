/**
 * `lintel identifiers qr ID --out FILE` and `lintel identifiers wallet-pass ID` (issue 21 item 1), the built
 * CLI as a child process against a real server: the QR code written as PNG (read back to the identifier's
 * value by an independent decoder) and as SVG to standard output; the wallet pass refused with the catalogue's
 * message while the project's wallet settings hold no certificate; a bad id is bad usage. A face identifier's
 * photo uploaded from a file (`photo-upload ID --image FILE`) and saved back (`photo ID --out FILE`).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { Jimp } from 'jimp';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { startTestServer, type TestServer } from '../support/server';
import { admin } from '../support/fixtures';
import { readQr, readSvgQr } from '../support/qr';
import { buildCli, freshConfigDir, lintel, removeConfigDirs } from './support';

let ts: TestServer;
let dir: string;
let out: string;
let api: ApiClient;

beforeAll(async () => {
  const built = buildCli();
  expect(built.status, built.stderr).toBe(0);
  ts = await startTestServer();
  dir = freshConfigDir();
  out = fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-cli-qr-'));
  const r = await lintel(['login', '--server', ts.url, '--login', ts.adminLogin, '--password-stdin'], {
    configDir: dir,
    input: `${ts.adminPassword}\n`,
  });
  expect(r.code, r.stderr).toBe(0);
  api = await admin(ts);
});
afterAll(async () => {
  await ts?.close();
  removeConfigDirs();
  fs.rmSync(out, { recursive: true, force: true });
});

it('writes the QR code of a QR identifier as PNG to a file and as SVG to standard output', async () => {
  const ident = (await getCommand('identifier.create').run({ api }, { type: 'qr', name: 'CLI QR' } as never))
    .data;
  const file = path.join(out, 'pass.png');
  const png = await lintel(['identifiers', 'qr', String(ident.id), '--out', file, '--json'], {
    configDir: dir,
  });
  expect(png.code, png.stderr).toBe(0);
  expect(JSON.parse(png.stdout)).toMatchObject({ file, content_type: 'image/png' });
  expect(await readQr(fs.readFileSync(file))).toBe(ident.value);

  const svg = await lintel(['identifiers', 'qr', String(ident.id), '--format', 'svg', '--out', '-'], {
    configDir: dir,
  });
  expect(svg.code, svg.stderr).toBe(0);
  expect(readSvgQr(svg.stdout)).toBe(ident.value);

  const bad = await lintel(['identifiers', 'qr', 'twelve'], { configDir: dir });
  expect(bad.code).toBe(2);
});

it('says why a wallet pass cannot be made while the wallet settings hold no certificate', async () => {
  const ident = (await getCommand('identifier.create').run({ api }, { type: 'qr' } as never)).data;
  const r = await lintel(
    ['identifiers', 'wallet-pass', String(ident.id), '--out', path.join(out, 'x.pkpass')],
    {
      configDir: dir,
    },
  );
  expect(r.code).toBe(1);
  expect(r.stderr).toContain('The wallet settings hold no certificate: the pass cannot be signed');
  expect(fs.existsSync(path.join(out, 'x.pkpass'))).toBe(false);
});

it("uploads a face identifier's photo from a file and saves it back; another type is refused", async () => {
  const ident = (await getCommand('identifier.create').run({ api }, { type: 'face' } as never)).data;
  const picture = path.join(out, 'face.png');
  fs.writeFileSync(
    picture,
    await new Jimp({ width: 90, height: 60, color: 0x336699ff }).getBuffer('image/png'),
  );
  const up = await lintel(['identifiers', 'photo-upload', String(ident.id), '--image', picture, '--json'], {
    configDir: dir,
  });
  expect(up.code, up.stderr).toBe(0);
  const { photo_sha256 } = JSON.parse(up.stdout) as { photo_sha256: string };
  const file = path.join(out, 'face.jpg');
  const saved = await lintel(['identifiers', 'photo', String(ident.id), '--out', file, '--json'], {
    configDir: dir,
  });
  expect(saved.code, saved.stderr).toBe(0);
  expect(JSON.parse(saved.stdout)).toMatchObject({ file, content_type: 'image/jpeg' });
  expect(createHash('sha256').update(fs.readFileSync(file)).digest('hex')).toBe(photo_sha256);
  // the largest square at the centre
  const img = await Jimp.read(fs.readFileSync(file));
  expect([img.width, img.height]).toEqual([60, 60]);

  const qr = (await getCommand('identifier.create').run({ api }, { type: 'qr' } as never)).data;
  const refused = await lintel(['identifiers', 'photo-upload', String(qr.id), '--image', picture], {
    configDir: dir,
  });
  expect(refused.code).toBe(1);
});
