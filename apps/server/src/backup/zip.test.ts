/**
 * The make's zip writer read back by readers that are not ours: yauzl (the apply's), JSZip and `unzip -t` —
 * deflated and stored entries, UTF-8 names, an empty entry, and more entries than the 16-bit count of a plain
 * zip holds (the ZIP64 end records).
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import JSZip from 'jszip';
import yauzl from 'yauzl';
import { ZipWriter } from './zip';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-zip-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const mtime = new Date('2026-11-28T10:11:12Z');

/** Every entry of the zip as yauzl reads it, its bytes inflated (CRC and sizes checked by yauzl). */
function readAll(file: string): Promise<Map<string, Buffer>> {
  return new Promise((resolve, reject) =>
    yauzl.open(file, { lazyEntries: true, strictFileNames: true }, (err, zip) => {
      if (err || !zip) return reject(err);
      const out = new Map<string, Buffer>();
      zip.on('entry', (e: yauzl.Entry) =>
        zip.openReadStream(e, (err2, s) => {
          if (err2 || !s) return reject(err2);
          const parts: Buffer[] = [];
          s.on('data', (b: Buffer) => parts.push(b));
          s.on('end', () => {
            out.set(e.fileName, Buffer.concat(parts));
            zip.readEntry();
          });
          s.on('error', reject);
        }),
      );
      zip.on('end', () => resolve(out));
      zip.on('error', reject);
      zip.readEntry();
    }),
  );
}

it('writes deflated and stored entries that yauzl, JSZip and unzip read back', async () => {
  const file = path.join(dir, 'a.zip');
  const rows = Buffer.from('1\tПользователь\t\\N\n'.repeat(50_000));
  const photo = randomBytes(300_000);
  const zip = await ZipWriter.create(file);
  async function* chunks() {
    for (let i = 0; i < rows.length; i += 7_000) yield rows.subarray(i, i + 7_000);
  }
  expect(await zip.add('tables/users.copy', chunks(), { mtime, level: 1 })).toMatchObject({
    size: rows.length,
  });
  await zip.add('tables/empty.copy', [], { mtime, level: 1 });
  await zip.add('files/faces/фото.jpg', [photo], { mtime });
  await zip.end();

  const read = await readAll(file);
  expect([...read.keys()]).toEqual(['tables/users.copy', 'tables/empty.copy', 'files/faces/фото.jpg']);
  expect(read.get('tables/users.copy')!.equals(rows)).toBe(true);
  expect(read.get('tables/empty.copy')!.length).toBe(0);
  expect(read.get('files/faces/фото.jpg')!.equals(photo)).toBe(true);
  const z = await JSZip.loadAsync(fs.readFileSync(file));
  expect((await z.file('tables/users.copy')!.async('nodebuffer')).equals(rows)).toBe(true);
  expect(execFileSync('unzip', ['-tq', file], { encoding: 'utf8' })).toMatch(/No errors detected/);
});

it('writes the ZIP64 end records when the entries pass 65,535', async () => {
  const file = path.join(dir, 'many.zip');
  const zip = await ZipWriter.create(file);
  const n = 70_000;
  for (let i = 0; i < n; i++) await zip.add(`files/avatars/${i}.jpg`, [Buffer.from(String(i))], { mtime });
  await zip.end();
  const read = await readAll(file);
  expect(read.size).toBe(n);
  expect(read.get('files/avatars/69999.jpg')!.toString()).toBe('69999');
  expect(execFileSync('unzip', ['-tq', file], { encoding: 'utf8' })).toMatch(/No errors detected/);
}, 120_000);
