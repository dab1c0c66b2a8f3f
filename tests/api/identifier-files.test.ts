/**
 * A QR identifier's files (issue 21 item 1): its QR code as PNG and SVG (read back by an independent decoder
 * to the identifier's value), gated and scoped like reading it, refused for other types; its Apple Wallet
 * pass refused with `wallet_certificate_missing` until the project's wallet settings hold a certificate and
 * key, then a `.pkpass` whose manifest names every file by its SHA-1 and whose detached PKCS#7 signature of
 * the manifest `openssl smime -verify` accepts against the certificate (made here, self-signed). The wallet
 * settings never return the certificate or key; the placeholder keeps them; a key of another certificate is
 * refused. The CLI's `lintel identifiers qr` and `wallet-pass` write the same files (tests/cli).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import JSZip from 'jszip';
import { sql } from 'kysely';
import { PASSWORD_PLACEHOLDER, downloadFile, getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { selfSigned as certificate } from '../support/certificates';
import { startTestServer, type TestServer } from '../support/server';
import { admin, failure, raw, rootGroup, userWith } from '../support/fixtures';
import { readQr, readSvgQr } from '../support/qr';

let ts: TestServer;
let api: ApiClient;
let root: number;
let dir: string;
const cmd = getCommand;

/** A certificate made in this file's folder (openssl verifies against its file). */
const selfSigned = (name: string) => {
  const made = certificate(name, dir);
  return { ...made, certFile: made.certFile! };
};

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-wallet-'));
  ts = await startTestServer();
  api = await admin(ts);
  root = await rootGroup(api);
});
afterAll(async () => {
  await ts?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const qrIdentifier = async () =>
  (await cmd('identifier.create').run({ api }, { type: 'qr', name: 'Visitor QR' } as never)).data;

describe('the QR code of an identifier', () => {
  it('is a PNG and an SVG that read back to the value the server made', async () => {
    const ident = await qrIdentifier();
    expect(ident.value).toMatch(/^[0-9a-f-]{36}$/);
    const png = await downloadFile({ api }, cmd('identifier.qr'), { id: ident.id });
    expect(png.contentType).toBe('image/png');
    expect(png.filename).toBe(`identifier-${ident.id}.png`);
    expect(await readQr(Buffer.from(png.bytes))).toBe(ident.value);

    const svg = await downloadFile({ api }, cmd('identifier.qr'), { id: ident.id, format: 'svg' });
    expect(svg.contentType).toMatch(/^image\/svg\+xml/);
    const text = Buffer.from(svg.bytes).toString('utf8');
    expect(text).toMatch(/^<svg /);
    expect(readSvgQr(text)).toBe(ident.value);

    // the size asked for, within bounds
    const small = await downloadFile({ api }, cmd('identifier.qr'), { id: ident.id, size: 128 });
    expect(Buffer.from(small.bytes).readUInt32BE(16)).toBeLessThanOrEqual(128);
    const big = await raw(ts, api, 'GET', `/identifiers/${ident.id}/qr`, { query: { size: 100000 } });
    expect([big.status, big.body.message]).toEqual([422, 'check_fields_data']);
  });

  it('is only for QR identifiers: a card has none', async () => {
    const card = (
      await cmd('identifier.create').run({ api }, { type: 'card', value: '12345', name: 'Card' } as never)
    ).data;
    const e = await failure(downloadFile({ api }, cmd('identifier.qr'), { id: card.id }));
    expect([e.status, e.message]).toEqual([422, 'invalid_identifier']);
  });

  it('is read like the identifier: refused without the permission, 404 for an unknown one', async () => {
    const ident = await qrIdentifier();
    const other = await userWith(ts, api, { permissions: ['users.view'], domains: [root] });
    const e = await failure(
      downloadFile({ api: await other.client() }, cmd('identifier.qr'), { id: ident.id }),
    );
    expect([e.status, e.message]).toEqual([403, 'method_prohibited']);
    const viewer = await userWith(ts, api, { permissions: ['identifiers.view_all'], domains: [root] });
    const seen = await downloadFile({ api: await viewer.client() }, cmd('identifier.qr'), { id: ident.id });
    expect(await readQr(Buffer.from(seen.bytes))).toBe(ident.value);
    const missing = await failure(downloadFile({ api }, cmd('identifier.qr'), { id: 99_999_999 }));
    expect([missing.status, missing.message]).toEqual([404, 'item_not_found']);
    expect((await raw(ts, null, 'GET', `/identifiers/${ident.id}/qr`)).status).toBe(401);
  });
});

describe('the Apple Wallet pass of an identifier', () => {
  it('is refused with the catalogue code while the wallet settings hold no certificate', async () => {
    const ident = await qrIdentifier();
    const e = await failure(downloadFile({ api }, cmd('identifier.wallet_pass'), { id: ident.id }));
    expect([e.status, e.message]).toEqual([409, 'wallet_certificate_missing']);
    const settings = await cmd('settings.wallet_get').run({ api }, {});
    expect(settings).toEqual({
      data: {
        pass_type_id: '',
        team_id: '',
        organization_name: '',
        certificate: '',
        key: '',
        wwdr_certificate: '',
      },
      enabled: false,
    });
  });

  it('keeps the certificate and key secret, and refuses a key that is not the certificate’s', async () => {
    const a = selfSigned('a');
    const b = selfSigned('b');
    const refused = await failure(
      cmd('settings.wallet_update').run({ api }, { certificate: a.cert, key: b.key }),
    );
    expect(refused.message).toBe('check_fields_data');
    expect(JSON.stringify(refused.body)).toContain('key_mismatch');
    const bad = await failure(cmd('settings.wallet_update').run({ api }, { certificate: 'not a PEM' }));
    expect(JSON.stringify(bad.body)).toContain('pem_certificate');

    const saved = await cmd('settings.wallet_update').run(
      { api },
      { pass_type_id: 'pass.test.lintel.a', team_id: 'TEAM123456', certificate: a.cert, key: a.key },
    );
    expect(saved.enabled).toBe(true);
    expect(saved.data).toMatchObject({ certificate: PASSWORD_PLACEHOLDER, key: PASSWORD_PLACEHOLDER });
    const shown = JSON.stringify(await cmd('settings.wallet_get').run({ api }, {}));
    expect(shown).not.toContain('BEGIN');
    // the placeholder sent back keeps them; the audit event says they changed, never what they are
    const kept = await cmd('settings.wallet_update').run(
      { api },
      { organization_name: 'Acme Towers', certificate: PASSWORD_PLACEHOLDER, key: PASSWORD_PLACEHOLDER },
    );
    expect(kept.enabled).toBe(true);
    const events = await sql<{ data: unknown }>`
      select data from audit_events where action = 'wallet_settings_changed' order by id`.execute(
      ts.server.context.db,
    );
    expect(events.rows.length).toBe(2);
    expect(events.rows[0]!.data).toMatchObject({ certificate_changed: true, key_changed: true });
    expect(events.rows[1]!.data).toMatchObject({ certificate_changed: false, key_changed: false });
    expect(JSON.stringify(events.rows)).not.toContain('BEGIN');
  });

  it('is a .pkpass whose manifest names every file by SHA-1 and whose signature openssl verifies', async () => {
    const a = selfSigned('signer');
    await cmd('settings.wallet_update').run(
      { api },
      { pass_type_id: 'pass.test.lintel.signer', team_id: 'TEAM123456', certificate: a.cert, key: a.key },
    );
    const ident = (
      await cmd('identifier.create').run({ api }, {
        type: 'qr',
        name: 'Conference guest',
        period_restrict_active: true,
        period_restrict_from: '2026-12-01T09:00:00',
        period_restrict_to: '2026-12-01T18:00:00',
        period_restrict_from_u: '2026-12-01T09:00:00Z',
        period_restrict_to_u: '2026-12-01T18:00:00Z',
      } as never)
    ).data;
    const file = await downloadFile({ api }, cmd('identifier.wallet_pass'), { id: ident.id });
    expect(file.contentType).toBe('application/vnd.apple.pkpass');
    expect(file.filename).toBe(`identifier-${ident.id}.pkpass`);

    const zip = await JSZip.loadAsync(file.bytes);
    const names = Object.keys(zip.files).sort();
    expect(names).toEqual(['icon.png', 'icon@2x.png', 'manifest.json', 'pass.json', 'signature']);
    const read = (n: string) => zip.file(n)!.async('nodebuffer');
    const pass = JSON.parse((await read('pass.json')).toString('utf8'));
    expect(pass).toMatchObject({
      formatVersion: 1,
      passTypeIdentifier: 'pass.test.lintel.signer',
      teamIdentifier: 'TEAM123456',
      barcodes: [{ format: 'PKBarcodeFormatQR', message: ident.value }],
      expirationDate: '2026-12-01T18:00:00Z',
      generic: { primaryFields: [{ value: 'Conference guest' }] },
    });
    const manifestBytes = await read('manifest.json');
    const manifest = JSON.parse(manifestBytes.toString('utf8'));
    expect(Object.keys(manifest).sort()).toEqual(['icon.png', 'icon@2x.png', 'pass.json']);
    for (const n of Object.keys(manifest))
      expect(manifest[n], n).toBe(
        createHash('sha1')
          .update(await read(n))
          .digest('hex'),
      );

    // the detached signature of the manifest, verified by OpenSSL against the signer's certificate
    const sigFile = path.join(dir, 'signature');
    const manFile = path.join(dir, 'manifest.json');
    fs.writeFileSync(sigFile, await read('signature'));
    fs.writeFileSync(manFile, manifestBytes);
    const verify = (content: string) =>
      execFileSync(
        'openssl',
        ['smime', '-verify', '-inform', 'DER', '-in', sigFile, '-content', content, '-CAfile', a.certFile],
        { stdio: ['ignore', 'ignore', 'pipe'] },
      );
    expect(() => verify(manFile)).not.toThrow();
    // a changed manifest does not verify
    const forged = path.join(dir, 'forged.json');
    fs.writeFileSync(forged, manifestBytes.toString('utf8').replace(/"[0-9a-f]{40}"/, `"${'0'.repeat(40)}"`));
    expect(() => verify(forged)).toThrow();

    // a revoked identifier's pass is voided
    await cmd('identifier.revoke').run({ api }, { id: ident.id });
    const voided = await JSZip.loadAsync(
      (await downloadFile({ api }, cmd('identifier.wallet_pass'), { id: ident.id })).bytes,
    );
    expect(JSON.parse(await voided.file('pass.json')!.async('string')).voided).toBe(true);
  });

  it('is only for QR identifiers, and gated like reading the identifier', async () => {
    const card = (
      await cmd('identifier.create').run({ api }, { type: 'card', value: '777', name: 'Card' } as never)
    ).data;
    const e = await failure(downloadFile({ api }, cmd('identifier.wallet_pass'), { id: card.id }));
    expect(e.message).toBe('invalid_identifier');
    const ident = await qrIdentifier();
    const other = await userWith(ts, api, { permissions: ['users.view'], domains: [root] });
    const refused = await failure(
      downloadFile({ api: await other.client() }, cmd('identifier.wallet_pass'), { id: ident.id }),
    );
    expect(refused.message).toBe('method_prohibited');
  });
});
