/**
 * A face identifier's photo reaches the devices (issue 21 item 1; docs/decisions.md "Face photos"): a
 * simulated panel holding the face identifier receives its photo after the item (`PUT …/item/{uid}/face`,
 * `{photo, sha256}`), a new photo replaces it, and an unchanged plan sends nothing — the photo is sent once
 * per change. A face identifier without a photo is held with none (the panel answers 404 for it); another
 * type never gets a photo request. The job worker and the planner's timer do not run: `poll()` plans,
 * `jobs.drain()` sends.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { Jimp } from 'jimp';
import { downloadFile, getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { ManualClock } from '@lintel/server';
import type { SimulatedDevice } from '@lintel/device-sim';
import { startTestServer, type TestServer } from '../support/server';
import { admin, rootGroup, uid } from '../support/fixtures';
import { settleAccessSync, simulatedPanel } from './panels';

const clock = new ManualClock(new Date('2026-11-25T08:00:00Z'));
let ts: TestServer;
let api: ApiClient;
let root: number;
const sims: SimulatedDevice[] = [];

beforeAll(async () => {
  ts = await startTestServer({
    config: {
      clock,
      modules: ['events', 'devices', 'http'],
      mqtt: {
        port: 0,
        host: '127.0.0.1',
        shared: false,
        requestTimeoutMs: 2_000,
        sweepMs: 0,
        taskAttempts: 3,
      },
      accessSync: { pollMs: 0, batchSize: 250, window: 16 },
    },
  });
  api = await admin(ts);
  root = await rootGroup(api);
});
afterAll(async () => {
  await Promise.all(sims.map((s) => s.stop().catch(() => undefined)));
  await ts?.close();
});

const cmd = getCommand;

const sync = () => settleAccessSync(ts);
const simulated = () => simulatedPanel(api, { domain: root, sims, prefix: 'FACE' });

/** An 800×800 PNG of noise: a photo as large as a face photo gets (640 px of noise is a JPEG of ~300 KB). */
async function noise(): Promise<Blob> {
  const img = new Jimp({ width: 800, height: 800, color: 0x000000ff });
  img.scan(0, 0, 800, 800, (_x, _y, idx) => {
    img.bitmap.data.writeUInt32BE(Math.floor(Math.random() * 0xffffff) * 256 + 0xff, idx);
  });
  return new Blob([new Uint8Array(await img.getBuffer('image/png'))], { type: 'image/png' });
}

/** A PNG of one colour. */
async function picture(color: number): Promise<Blob> {
  const png = await new Jimp({ width: 200, height: 160, color }).getBuffer('image/png');
  return new Blob([new Uint8Array(png)], { type: 'image/png' });
}

const facePuts = (sim: SimulatedDevice, uidOf: string) =>
  sim.requests.filter((r) => r.method === 'PUT' && r.uri === `/api/v1/access/identifier/item/${uidOf}/face`);

/** The panel's own answer for an item's face photo (its HTTP API). */
const panelFace = async (sim: SimulatedDevice, uidOf: string) => {
  const res = await fetch(
    `http://${sim.httpHost}:${sim.httpPort}/api/v1/access/identifier/item/${uidOf}/face`,
  );
  return { status: res.status, body: (await res.json()) as { photo?: string; sha256?: string } };
};

describe('face photos on the devices', () => {
  it('the panel holding a face identifier receives its photo once; a new photo replaces it', async () => {
    const panel = await simulated();
    const face = (await cmd('identifier.create').run({ api }, { type: 'face', name: 'Face' } as never)).data;
    const item = `identifier-${face.id}`;
    const first = await cmd('identifier.photo_upload').run(
      { api },
      { id: face.id, image: await picture(0x336699ff) },
    );
    await cmd('access_rule.create').run({ api }, {
      name: `Faces ${uid()}`,
      devices: [panel.id],
      identifiers: [face.id],
    } as never);
    await sync();

    // the item names the photo, the photo follows it, byte for byte what the platform stores
    expect(panel.sim.identifiers.get(item)).toMatchObject({
      identifier_type: 'face_id',
      identifier_number: face.value,
      face_sha256: first.photo_sha256,
    });
    const stored = Buffer.from((await downloadFile({ api }, cmd('identifier.photo'), { id: face.id })).bytes);
    const held = panel.sim.facePhotos.get(item)!;
    expect(held.sha256).toBe(first.photo_sha256);
    expect(held.photo.equals(stored)).toBe(true);
    expect(createHash('sha256').update(held.photo).digest('hex')).toBe(first.photo_sha256);
    const puts = facePuts(panel.sim, item);
    expect(puts).toHaveLength(1);
    expect(puts[0]!.request_id).toMatch(/^task-\d+-\d+-face$/);
    const itemPut = panel.sim.requests.findIndex(
      (r) => r.method === 'PUT' && r.uri === `/api/v1/access/identifier/item/${item}`,
    );
    expect(itemPut).toBeGreaterThanOrEqual(0);
    expect(panel.sim.requests.indexOf(puts[0]!)).toBeGreaterThan(itemPut);
    expect((await panelFace(panel.sim, item)).body.sha256).toBe(first.photo_sha256);

    // nothing changed: nothing is sent again
    const before = panel.sim.requests.length;
    await cmd('identifier.update').run({ api }, {
      id: face.id,
      description: 'unchanged for the devices',
    } as never);
    await sync();
    expect(panel.sim.requests.length).toBe(before);

    // a new photo is a difference: the item and its new photo, once (a large one: MQTT carries it whole)
    const second = await cmd('identifier.photo_upload').run({ api }, { id: face.id, image: await noise() });
    expect(second.photo_sha256).not.toBe(first.photo_sha256);
    await sync();
    expect(panel.sim.identifiers.get(item)?.face_sha256).toBe(second.photo_sha256);
    expect(panel.sim.facePhotos.get(item)?.sha256).toBe(second.photo_sha256);
    expect(panel.sim.facePhotos.get(item)!.photo.length).toBeGreaterThan(100_000);
    expect(facePuts(panel.sim, item)).toHaveLength(2);
    await sync();
    expect(facePuts(panel.sim, item)).toHaveLength(2);
  });

  it('a face identifier without a photo is held with none; other types get no photo request', async () => {
    const panel = await simulated();
    const face = (await cmd('identifier.create').run({ api }, { type: 'face' } as never)).data;
    const card = (
      await cmd('identifier.create').run({ api }, {
        type: 'card',
        value: String(Math.floor(Math.random() * 9e9) + 1e8),
      } as never)
    ).data;
    await cmd('access_rule.create').run({ api }, {
      name: `Mixed ${uid()}`,
      devices: [panel.id],
      identifiers: [face.id, card.id],
    } as never);
    await sync();
    expect(panel.sim.identifiers.has(`identifier-${face.id}`)).toBe(true);
    expect(panel.sim.identifiers.get(`identifier-${face.id}`)).not.toHaveProperty('face_sha256');
    expect(panel.sim.identifiers.has(`identifier-${card.id}`)).toBe(true);
    expect(panel.sim.requests.some((r) => r.uri.endsWith('/face'))).toBe(false);
    expect((await panelFace(panel.sim, `identifier-${face.id}`)).status).toBe(404);
    expect((await panelFace(panel.sim, 'identifier-0')).status).toBe(404);
  });
});
