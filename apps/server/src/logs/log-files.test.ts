import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LogFiles } from './log-files';
import { scrubLine } from './scrub';

let dir: string;
let logs: LogFiles;
const open = (maxBytes: number, files: number) => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-logfiles-'));
  logs = new LogFiles('memory://', { dir, maxBytes, files }, false);
  return logs;
};
afterEach(() => {
  logs?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const line = (i: number) => JSON.stringify({ level: 30, time: 1_700_000_000_000 + i, msg: `line ${i}` });
const text = async (s: NodeJS.ReadableStream) => {
  let out = '';
  for await (const c of s) out += String(c);
  return out;
};

describe('log files', () => {
  it('rotates past its bound and keeps at most maxBytes × files', () => {
    const l = open(1000, 3);
    for (let i = 0; i < 500; i++) l.write('server', line(i));
    const files = fs.readdirSync(dir).sort();
    expect(files).toEqual(['server.1.log', 'server.2.log', 'server.log']);
    for (const f of files) expect(fs.statSync(path.join(dir, f)).size).toBeLessThanOrEqual(1000);
    const [src] = l.sources();
    expect(src).toMatchObject({ name: 'server', files: 3 });
    expect(src!.size_bytes).toBeLessThanOrEqual(3000);
  });

  it('pages backwards across rotations, newest last, without gaps or repeats', () => {
    const l = open(1000, 4);
    for (let i = 0; i < 60; i++) l.write('server', line(i));
    const seen: string[] = [];
    let before: string | undefined;
    for (let pages = 0; pages < 100; pages++) {
      const page = l.read('server', { limit: 7, before });
      expect(page.lines.length).toBeGreaterThan(0);
      seen.unshift(...page.lines.map((x) => x.message));
      if (!page.before) break;
      before = page.before;
    }
    const kept = seen.map((m) => Number(m.slice(5)));
    // the oldest lines went with the dropped file; what is kept is whole and in order
    expect(kept.at(-1)).toBe(59);
    expect(kept).toEqual(Array.from({ length: kept.length }, (_, k) => kept[0]! + k));
  });

  it('downloads the whole log oldest first, and clears every file of it', async () => {
    const l = open(1000, 3);
    for (let i = 0; i < 40; i++) l.write('jobs', line(i));
    const lines = (await text(l.download('jobs'))).trim().split('\n');
    const nums = lines.map((x) => (JSON.parse(x) as { msg: string }).msg);
    expect(nums.at(-1)).toBe('line 39');
    expect(l.read('jobs', { limit: 1000 }).lines.map((x) => x.message)).toEqual(nums);
    expect(l.clear('jobs')).toBeGreaterThan(0);
    expect(fs.readdirSync(dir)).toEqual(['jobs.log']);
    expect(l.read('jobs', { limit: 10 })).toEqual({ lines: [], before: null });
    l.write('jobs', line(99));
    expect(l.read('jobs', { limit: 10 }).lines.map((x) => x.message)).toEqual(['line 99']);
  });

  it('cuts an overlong line and keeps the text lines of a program that is not ours', () => {
    const l = open(1_000_000, 2);
    l.write('sip', 'x'.repeat(40_000));
    l.write('sip', ' 0(123) ERROR: <core> [core/tcp_main.c:1234]: connect failed');
    const page = l.read('sip', { limit: 10 });
    expect(page.lines[0]!.text.length).toBeLessThan(17_000);
    expect(page.lines[1]).toMatchObject({
      at: null,
      level: null,
      message: expect.stringMatching(/connect failed$/),
    });
  });
});

describe('scrubbing', () => {
  it('redacts secrets at any depth and in text, and leaves the rest', () => {
    const out = JSON.parse(
      scrubLine(
        JSON.stringify({
          msg: 'GET /x?token=abc&page=2',
          code: 1,
          a: { b: { c: { device_password: 'p1', sip_password: 'p2', name: 'door' } } },
          list: [{ refresh: 'r1' }, 'Authorization: Bearer abcdefghij'],
          body: { code: 'c1', old: 'o1', new: 'n1' },
        }),
      ),
    ) as Record<string, unknown>;
    expect(out).toEqual({
      msg: 'GET /x?token=[redacted]&page=2',
      code: 1,
      a: { b: { c: { device_password: '[redacted]', sip_password: '[redacted]', name: 'door' } } },
      list: [{ refresh: '[redacted]' }, 'Authorization: Bearer [redacted]'],
      body: { code: '[redacted]', old: '[redacted]', new: '[redacted]' },
    });
  });
});
