import { once } from 'node:events';
import { PassThrough, Readable } from 'node:stream';
import ExcelJS from 'exceljs';
import { StreamedReply } from '../pipeline/streamed-reply';

/** One cell of a file: a report's, or an export's. */
export type Cell = string | number | boolean | null;

/**
 * A report written as it is read: `rows` yields the rows page by page (keyset pages of the database), and the
 * file's bytes leave as each row is written — a CSV line, or an XLSX row committed to exceljs's streaming
 * writer — so memory stays flat whatever the number of rows (spec part 2 §9: reports within 5 minutes).
 */
export function reportFile(
  format: 'csv' | 'xlsx',
  sheet: string,
  header: string[],
  rows: AsyncIterable<Cell[]>,
): Readable {
  return format === 'csv' ? csvStream(header, rows) : xlsxStream(sheet, header, rows);
}

const FILE_TYPES = {
  csv: 'text/csv; charset=utf-8',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
} as const;

/** A file as the streamed reply a handler answers: sent as a download named `filename`. */
export function fileReply(
  format: 'csv' | 'xlsx',
  filename: string,
  sheet: string,
  header: string[],
  rows: AsyncIterable<Cell[]>,
): StreamedReply {
  return new StreamedReply(FILE_TYPES[format], reportFile(format, sheet, header, rows), filename);
}

const csvCell = (v: Cell): string => {
  if (v === null) return '';
  const s = String(v);
  // a formula-looking text is written as text (CSV injection), then quoted when it needs to be
  const safe = /^[=+\-@\t\r]/.test(s) && typeof v === 'string' ? `'${s}` : s;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
};
const csvLine = (cells: Cell[]) => `${cells.map(csvCell).join(',')}\r\n`;

function csvStream(header: string[], rows: AsyncIterable<Cell[]>): Readable {
  return Readable.from(
    (async function* () {
      // a byte-order mark, so spreadsheet programs read the UTF-8 names (Cyrillic) right
      yield `\uFEFF${csvLine(header)}`;
      for await (const r of rows) yield csvLine(r);
    })(),
  );
}

export function xlsxStream(sheet: string, header: string[], rows: AsyncIterable<Cell[]>): Readable {
  const out = new PassThrough();
  const book = new ExcelJS.stream.xlsx.WorkbookWriter({
    stream: out,
    useStyles: false,
    useSharedStrings: false,
  });
  const ws = book.addWorksheet(sheet.slice(0, 31));
  void (async () => {
    ws.addRow(header).commit();
    for await (const r of rows) {
      ws.addRow(r).commit();
      // the reader is slower than the database: wait for it rather than buffer the file in memory
      // (or stop when it went away: a closed download reads no more pages)
      if (out.writableNeedDrain) await Promise.race([once(out, 'drain'), once(out, 'close')]);
      if (out.destroyed) return;
    }
    ws.commit();
    await book.commit();
  })().catch((err: unknown) => out.destroy(err as Error));
  return out;
}
