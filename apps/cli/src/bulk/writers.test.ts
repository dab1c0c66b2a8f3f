import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, expect, it } from 'vitest';
import { openWriter, type RowShape } from './writers';

const shape: RowShape<{ n: number }> = {
  columns: ['n'],
  cells: (r) => [r.n],
  object: (r) => r,
  sheet: 'rows',
};

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-writers-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

it.each(['ndjson', 'json', 'csv'] as const)(
  'an export aborted while a %s write is still on its way to the file removes the file and throws nothing',
  async (format) => {
    const file = path.join(dir, `cut.${format}`);
    const errors: unknown[] = [];
    const onError = (e: unknown) => errors.push(e);
    process.on('uncaughtException', onError);
    try {
      const writer = await openWriter(format, file, new PassThrough(), shape);
      // the batch is handed to the file stream, whose write to the disc has not completed yet
      void writer.write(Array.from({ length: 100 }, (_, n) => ({ n })));
      await writer.abort();
    } finally {
      process.off('uncaughtException', onError);
    }
    expect(errors).toEqual([]);
    expect(fs.existsSync(file)).toBe(false);
  },
);
