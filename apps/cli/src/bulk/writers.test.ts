import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { stringify } from 'csv-stringify/sync';
import { afterAll, expect, it } from 'vitest';
import type { FlatCell } from '@lintel/commands';
import { csvLine } from '@lintel/commands';
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

it('a CSV line is what csv-stringify writes, but booleans as true/false and nothing as an empty cell', () => {
  const rows: FlatCell[][] = [
    ['plain', 1, -2.5, 0, ''],
    ['a,b', 'say "hi"', 'two\nlines', 'cr\rhere', 'crlf\r\nend'],
    ['"', '""', ',', '\n', ' spaced '],
    ['ü ☃ 𝄞', '=1+2', "'quoted'", ';', '\t'],
    [''],
    ['', ''],
    [12345678901234, 1e21, 0.1],
  ];
  for (const row of rows) expect(csvLine(row)).toBe(stringify([row]));
  expect(csvLine([true, false, null, 'x'])).toBe(stringify([['true', 'false', '', 'x']]));
  expect(csvLine(['a', null])).toBe('a,\n');
});
