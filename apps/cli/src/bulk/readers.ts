import fs from 'node:fs';
import path from 'node:path';
import { ImportCell, MAX_IMPORT_CELL, UserImportColumns } from '@lintel/commands';
import { CliError } from '../errors';
import { ExitCode } from '../exit-codes';
import { t } from '../i18n';
import { StringDecoder } from 'node:string_decoder';
import { CsvReader, type CsvRecord } from './csv';
import { JsonSyntaxError, jsonArrayItems, ndjsonItems, type FileProblem } from './json-stream';

export type FileFormat = 'csv' | 'xlsx' | 'json' | 'ndjson';

/** A cell as the import command takes it. */
export type Cell = string | number | boolean | null | Array<string | number>;

/** One row of the file: the line (CSV, NDJSON: the text line; XLSX: the sheet's row; JSON: where the object starts). */
export interface FileRow {
  line: number;
  cells: Record<string, Cell>;
}

export interface RowSource {
  format: FileFormat;
  /** size of the file in bytes, and how far the rows handed out so far reach into it: the fraction done */
  size: number;
  position(): number;
  rows: AsyncGenerator<FileRow>;
}

/** Columns a file must have (the others may be left out). */
const REQUIRED = ['login', 'name', 'role', 'domains'] as const;

/** The columns a family's file may hold, and those it must: the users' by default. */
export interface FileColumns {
  known: readonly string[];
  required: readonly string[];
}
export const UserFileColumns: FileColumns = { known: UserImportColumns, required: REQUIRED };

export function formatOf(file: string, given?: string): FileFormat {
  const ext = (given ?? path.extname(file).slice(1)).toLowerCase();
  if (ext === 'csv' || ext === 'xlsx' || ext === 'json' || ext === 'ndjson') return ext;
  if (ext === 'jsonl') return 'ndjson';
  throw new CliError('unknown_format', ExitCode.usage, { file, formats: ['csv', 'xlsx', 'json', 'ndjson'] });
}

/** A cell the import command takes (the server refuses a whole batch for one that it does not). */
function checkedCell(file: string, line: number, column: string, v: Cell): Cell {
  if (typeof v === 'string' && v.length > MAX_IMPORT_CELL)
    throw badFile(file, line, 'cell_too_long', { column, max: MAX_IMPORT_CELL });
  if (Array.isArray(v) && !ImportCell.safeParse(v).success) throw badFile(file, line, 'bad_cell', { column });
  return v;
}

/** A file the import cannot read: `reason` (a key of `cli:file_problems`) is kept for scripts, `detail` is its text. */
const badFile = (file: string, line: number, reason: FileProblem, params: Record<string, unknown> = {}) =>
  new CliError('bad_file', ExitCode.usage, {
    file,
    line,
    reason,
    ...params,
    detail: t(`file_problems.${reason}`, params),
  });

/** The header of a CSV or XLSX file: known columns, each once, the required ones present. */
export function checkHeader(
  file: string,
  names: readonly string[],
  cols: FileColumns = UserFileColumns,
): string[] {
  const columns = names.map((n) => n.trim().toLowerCase());
  const unknown = columns.filter((c) => !cols.known.includes(c));
  if (unknown.length)
    throw new CliError('unknown_columns', ExitCode.usage, {
      file,
      columns: unknown.map((c) => c || '""'),
      known: [...cols.known],
    });
  const twice = columns.filter((c, i) => columns.indexOf(c) !== i);
  if (twice.length)
    throw new CliError('duplicate_columns', ExitCode.usage, { file, columns: [...new Set(twice)] });
  const missing = cols.required.filter((c) => !columns.includes(c));
  if (missing.length) throw new CliError('missing_columns', ExitCode.usage, { file, columns: missing });
  return columns;
}

/** Where the rows handed out so far end in the file (what was read: a chunk ahead at most). */
interface Position {
  at: number;
}

async function* csvRows(
  file: string,
  input: fs.ReadStream,
  pos: Position,
  cols: FileColumns,
): AsyncGenerator<FileRow> {
  const reader = new CsvReader();
  const decoder = new StringDecoder('utf8');
  let header: string[] | null = null;
  let width = 0;
  // a chunk's records at a time (one stream event per chunk, not per record)
  const rows = function* (records: CsvRecord[]): Generator<FileRow> {
    for (const { fields, line } of records) {
      if (!header) {
        header = checkHeader(file, fields, cols);
        width = header.length;
        continue;
      }
      const cells: Record<string, Cell> = {};
      for (let i = 0; i < width; i++) {
        const v = fields[i];
        if (v !== undefined && v !== '') cells[header[i]!] = checkedCell(file, line, header[i]!, v);
      }
      yield { line, cells };
    }
  };
  try {
    for await (const chunk of input as AsyncIterable<Buffer>) {
      const records = reader.push(decoder.write(chunk));
      pos.at = input.bytesRead;
      yield* rows(records);
    }
    yield* rows(reader.push(decoder.end()));
    yield* rows(reader.end());
  } catch (err) {
    if (err instanceof CliError) throw err;
    const e = err as Error & { lines?: number };
    throw badFile(file, e.lines ?? 0, 'parser', { detail: e.message });
  } finally {
    input.destroy();
  }
  if (!header) throw badFile(file, 1, 'no_header');
}

/** An XLSX cell's value as text, number or boolean: rich text joined, formulas by their result, dates in ISO. */
function xlsxCell(v: unknown): Cell | undefined {
  if (v === null || v === undefined) return undefined;
  if (typeof v === 'string') return v === '' ? undefined : v;
  if (typeof v === 'number' || typeof v === 'boolean') return v;
  if (v instanceof Date) return v.toISOString();
  if (typeof v === 'object') {
    const o = v as { richText?: Array<{ text: string }>; text?: unknown; result?: unknown; error?: string };
    if (Array.isArray(o.richText)) return o.richText.map((r) => r.text).join('');
    if ('result' in o) return xlsxCell(o.result);
    if (o.text !== undefined) return xlsxCell(o.text);
    if (o.error) return o.error;
  }
  return String(v);
}

async function* xlsxRows(file: string, input: fs.ReadStream, cols: FileColumns): AsyncGenerator<FileRow> {
  const ExcelJS = (await import('exceljs')).default;
  const workbook = new ExcelJS.stream.xlsx.WorkbookReader(input, {
    worksheets: 'emit',
    sharedStrings: 'cache',
    hyperlinks: 'ignore',
    styles: 'ignore',
    entries: 'ignore',
  });
  let header: string[] | null = null;
  try {
    // the first worksheet only
    for await (const sheet of workbook) {
      for await (const row of sheet) {
        const values = (row.values ?? []) as unknown[];
        if (!header) {
          const names: string[] = [];
          for (let i = 1; i < values.length; i++) names.push(String(xlsxCell(values[i]) ?? ''));
          while (names.length && names[names.length - 1] === '') names.pop();
          header = checkHeader(file, names, cols);
          continue;
        }
        const cells: Record<string, Cell> = {};
        for (let i = 1; i < values.length; i++) {
          const v = xlsxCell(values[i]);
          if (v === undefined) continue;
          const column = header[i - 1];
          if (!column) throw badFile(file, row.number, 'beyond_last_column', { column: i });
          cells[column] = checkedCell(file, row.number, column, v);
        }
        if (Object.keys(cells).length) yield { line: row.number, cells };
      }
      break;
    }
  } catch (err) {
    if (err instanceof CliError) throw err;
    throw badFile(file, 0, 'parser', { detail: (err as Error).message });
  } finally {
    input.destroy();
  }
  if (!header) throw badFile(file, 1, 'no_header');
}

/** A JSON value as a cell: scalars and lists of ids or names; anything else is the file's fault. */
function jsonCell(file: string, line: number, column: string, v: unknown): Cell {
  if (
    v === null ||
    typeof v === 'string' ||
    typeof v === 'number' ||
    typeof v === 'boolean' ||
    Array.isArray(v)
  )
    return checkedCell(file, line, column, v as Cell);
  throw badFile(file, line, 'bad_cell', { column });
}

async function* jsonRows(
  file: string,
  input: fs.ReadStream,
  ndjson: boolean,
  cols: FileColumns,
): AsyncGenerator<FileRow> {
  input.setEncoding('utf8');
  const items = ndjson
    ? ndjsonItems(input as AsyncIterable<string>)
    : jsonArrayItems(input as AsyncIterable<string>);
  try {
    for await (const { line, value } of items) {
      if (typeof value !== 'object' || value === null || Array.isArray(value))
        throw badFile(file, line, 'expected_object');
      const unknown = Object.keys(value).filter((k) => !cols.known.includes(k));
      if (unknown.length)
        throw new CliError('unknown_columns', ExitCode.usage, {
          file,
          columns: unknown,
          known: [...cols.known],
          line,
        });
      const cells: Record<string, Cell> = {};
      for (const [k, v] of Object.entries(value)) cells[k] = jsonCell(file, line, k, v);
      yield { line, cells };
    }
  } catch (err) {
    if (err instanceof JsonSyntaxError) throw badFile(file, err.line, err.reason, { detail: err.detail });
    throw err;
  } finally {
    input.destroy();
  }
}

/** Opens a file of users (or of `cols`) for reading row by row; the file is never read whole. */
export function openRows(file: string, format: FileFormat, cols: FileColumns = UserFileColumns): RowSource {
  let size: number;
  try {
    const stat = fs.statSync(file);
    if (!stat.isFile()) throw new Error('not a file');
    size = stat.size;
    fs.accessSync(file, fs.constants.R_OK);
  } catch (err) {
    throw new CliError('file_unreadable', ExitCode.usage, { file, detail: (err as Error).message });
  }
  // nothing listens yet, so nothing flows before a reader attaches
  const stream = fs.createReadStream(file, { highWaterMark: 256 * 1024 });
  const pos: Position = { at: 0 };
  const rows =
    format === 'csv'
      ? csvRows(file, stream, pos, cols)
      : format === 'xlsx'
        ? xlsxRows(file, stream, cols)
        : jsonRows(file, stream, format === 'ndjson', cols);
  // how much was read (a chunk ahead at most; XLSX counts the compressed file)
  return { format, size, position: () => (format === 'csv' ? pos.at : stream.bytesRead), rows };
}
