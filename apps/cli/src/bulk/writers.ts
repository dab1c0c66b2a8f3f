import fs from 'node:fs';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { csvLine, type FlatCell } from '@lintel/commands';
import type { FileFormat } from './readers';

/**
 * How an exported row is written: its columns, its cells in a flat file (CSV, XLSX: lists already joined,
 * booleans and nothing as they are), and what JSON and NDJSON write for it.
 */
export interface RowShape<R> {
  columns: readonly string[];
  cells(row: R): FlatCell[];
  object(row: R): unknown;
  /** the XLSX sheet's name */
  sheet: string;
}

export interface RowWriter<R> {
  /** writes a batch of rows, waiting while the output is full */
  write(rows: readonly R[]): Promise<void>;
  close(): Promise<void>;
}

/** A writer whose file can be dropped when the export fails half-way. */
export interface FileRowWriter<R> extends RowWriter<R> {
  /** stops writing and removes the file (nothing for stdout) */
  abort(): Promise<void>;
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

async function csvWriter<R>(out: Writable, isStdout: boolean, shape: RowShape<R>): Promise<RowWriter<R>> {
  await put(out, csvLine(shape.columns));
  return {
    async write(rows) {
      // the cells as the web console's export writes them too
      let text = '';
      for (const r of rows) text += csvLine(shape.cells(r));
      if (text) await put(out, text);
    },
    close: () => end(out, isStdout),
  };
}

function jsonWriter<R>(out: Writable, isStdout: boolean, ndjson: boolean, shape: RowShape<R>): RowWriter<R> {
  let first = true;
  return {
    async write(rows) {
      if (!rows.length) return;
      const text = rows.map((r) => JSON.stringify(shape.object(r))).join(ndjson ? '\n' : ',\n');
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

async function xlsxWriter<R>(out: Writable, isStdout: boolean, shape: RowShape<R>): Promise<RowWriter<R>> {
  const ExcelJS = (await import('exceljs')).default;
  // inline strings and no styles: rows are written out as they come, nothing is kept for the end
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({
    stream: out,
    useSharedStrings: false,
    useStyles: false,
  });
  const sheet = workbook.addWorksheet(shape.sheet);
  sheet.addRow([...shape.columns]).commit();
  return {
    async write(rows) {
      for (const r of rows) sheet.addRow(shape.cells(r)).commit();
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

/** A writer of exported rows to a file (or stdout), in the given format, streaming batch by batch. */
export async function openWriter<R>(
  format: FileFormat,
  file: string | null,
  stdout: Writable,
  shape: RowShape<R>,
): Promise<FileRowWriter<R>> {
  const out = file ? fs.createWriteStream(file) : stdout;
  if (file) await once(out as fs.WriteStream, 'open');
  const isStdout = !file;
  const writer =
    format === 'csv'
      ? await csvWriter(out, isStdout, shape)
      : format === 'xlsx'
        ? await xlsxWriter(out, isStdout, shape)
        : jsonWriter(out, isStdout, format === 'ndjson', shape);
  return {
    ...writer,
    async abort() {
      if (!file) return;
      // a file cut short must not be taken for the whole export. A write still on its way to the disc
      // fails once the stream is destroyed (ERR_STREAM_DESTROYED, emitted as an error): that failure is
      // the abort's own, so it is heard here, and the file goes once the stream has closed its descriptor
      out.on('error', () => {});
      const closed = new Promise<void>((resolve) => out.once('close', () => resolve()));
      out.destroy();
      await closed;
      await fs.promises.rm(file, { force: true });
    },
  };
}
