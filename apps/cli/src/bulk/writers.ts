import fs from 'node:fs';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { csvCells, MULTI_VALUE_SEPARATOR, UserExportColumns } from '@lintel/commands';
import type { Cell, FileFormat } from './readers';

/** One exported user: the import columns (lists as lists; CSV and XLSX join them with `;`). */
export type ExportRow = Record<(typeof UserExportColumns)[number], Cell>;

export interface RowWriter {
  /** writes a page of rows, waiting while the output is full */
  write(rows: readonly ExportRow[]): Promise<void>;
  close(): Promise<void>;
}

/** Writes text with backpressure. */
async function put(out: Writable, text: string): Promise<void> {
  if (!out.write(text)) await once(out, 'drain');
}

async function end(out: Writable, isStdout: boolean): Promise<void> {
  if (isStdout) return;
  out.end();
  await once(out, 'finish');
}

const flat = (v: Cell): string | number | boolean | null =>
  Array.isArray(v) ? v.join(MULTI_VALUE_SEPARATOR) : v;

async function csvWriter(out: Writable, isStdout: boolean): Promise<RowWriter> {
  const { stringify } = await import('csv-stringify/sync');
  await put(out, stringify([[...UserExportColumns]]));
  return {
    async write(rows) {
      // the cells as the web console's export writes them too
      const records = rows.map((r) => csvCells(r));
      if (records.length) await put(out, stringify(records));
    },
    close: () => end(out, isStdout),
  };
}

function jsonWriter(out: Writable, isStdout: boolean, ndjson: boolean): RowWriter {
  let first = true;
  return {
    async write(rows) {
      if (!rows.length) return;
      const text = rows.map((r) => JSON.stringify(r)).join(ndjson ? '\n' : ',\n');
      await put(out, ndjson ? `${text}\n` : `${first ? '[\n' : ',\n'}${text}`);
      first = false;
    },
    async close() {
      if (!ndjson) await put(out, first ? '[]\n' : '\n]\n');
      await end(out, isStdout);
    },
  };
}

/** What exceljs's sheet stream pipes into: a stream whose pending bytes are in `_writableState.length`. */
type ZipEntry = NodeJS.EventEmitter & { _writableState?: { length: number } };
/** Bytes of sheet XML allowed to wait for the compressor before the export waits. */
const ZIP_BACKLOG = 1024 * 1024;

async function xlsxWriter(out: Writable, isStdout: boolean): Promise<RowWriter> {
  const ExcelJS = (await import('exceljs')).default;
  // inline strings and no styles: rows are written out as they come, nothing is kept for the end
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({
    stream: out,
    useSharedStrings: false,
    useStyles: false,
  });
  const sheet = workbook.addWorksheet('users');
  sheet.addRow([...UserExportColumns]).commit();
  return {
    async write(rows) {
      for (const r of rows) sheet.addRow(UserExportColumns.map((c) => flat(r[c]) ?? null)).commit();
      // exceljs writes the sheet into the zip without waiting for it: wait here while the compressor
      // (the sheet stream's consumer) holds more than its buffer, else a large export piles up in memory
      // (a readable-stream 2 PassThrough: its buffer is only in `_writableState`)
      const zipEntry = (sheet as unknown as { stream?: { pipes?: ZipEntry[] } }).stream?.pipes?.[0];
      if (zipEntry?._writableState && zipEntry._writableState.length > ZIP_BACKLOG)
        await once(zipEntry, 'drain');
      if (out.writableNeedDrain) await once(out, 'drain');
    },
    async close() {
      sheet.commit();
      await workbook.commit();
      if (!isStdout && !out.writableFinished) await once(out, 'finish');
    },
  };
}

/** A writer of exported users to a file (or stdout), in the given format, streaming page by page. */
export async function openWriter(
  format: FileFormat,
  file: string | null,
  stdout: Writable,
): Promise<RowWriter> {
  const out = file ? fs.createWriteStream(file) : stdout;
  if (file) await once(out as fs.WriteStream, 'open');
  const isStdout = !file;
  if (format === 'csv') return csvWriter(out, isStdout);
  if (format === 'xlsx') return xlsxWriter(out, isStdout);
  return jsonWriter(out, isStdout, format === 'ndjson');
}
