import { csvCells, csvLine, UserExportColumns, type UserExportRow } from '@lintel/commands';
import { offsetMinutes } from '../../resources/format';

/**
 * The file of the console's user export, built in memory batch by batch as `user.export`'s stream arrives,
 * and handed to the browser as a Blob. It is byte for byte what `lintel users export` writes for the same rows: CSV by the same `csvLine` (comma, `"` quoting only where needed, `\n` line ends, no BOM; lists joined by `;`), JSON as an
 * array of one object per line. XLSX is left to the CLI (its writer, exceljs, is too heavy for the console).
 */
export const WebExportFormats = ['csv', 'json'] as const;
export type WebExportFormat = (typeof WebExportFormats)[number];

const MIME: Record<WebExportFormat, string> = {
  csv: 'text/csv;charset=utf-8',
  json: 'application/json;charset=utf-8',
};

export interface ExportFile {
  /** adds a page of rows */
  add(rows: readonly UserExportRow[]): void;
  /** the whole file */
  finish(): Blob;
}

function csvFile(): ExportFile {
  const parts: string[] = [csvLine(UserExportColumns)];
  return {
    add(rows) {
      for (const r of rows) parts.push(csvLine(csvCells(r)));
    },
    finish: () => new Blob(parts, { type: MIME.csv }),
  };
}

function jsonFile(): ExportFile {
  const parts: string[] = [];
  return {
    add(rows) {
      if (!rows.length) return;
      parts.push(`${parts.length ? ',\n' : '[\n'}${rows.map((r) => JSON.stringify(r)).join(',\n')}`);
    },
    finish: () => new Blob(parts.length ? [...parts, '\n]\n'] : ['[]\n'], { type: MIME.json }),
  };
}

export function openExportFile(format: WebExportFormat): Promise<ExportFile> {
  return Promise.resolve(format === 'csv' ? csvFile() : jsonFile());
}

const pad = (n: number) => String(n).padStart(2, '0');

/**
 * `users-2025-03-14.csv`: the day in the profile's time zone (an offset such as `+02:00`; anything else
 * means the browser's own zone), as every date of the console.
 */
export function exportFileName(format: WebExportFormat, now: Date, timeZone: string | null): string {
  const offset = offsetMinutes(timeZone);
  const d = offset === null ? now : new Date(now.getTime() + offset * 60_000);
  const [y, m, day] =
    offset === null
      ? [d.getFullYear(), d.getMonth() + 1, d.getDate()]
      : [d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate()];
  return `users-${y}-${pad(m)}-${pad(day)}.${format}`;
}

/** Hands a file to the browser's downloads, as a click on an `<a download>` would. */
export function downloadBlob(blob: Blob, fileName: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = fileName;
  a.hidden = true;
  document.body.append(a);
  a.click();
  a.remove();
  // the download has started reading the URL by then; revoking at once can cut it off in some browsers
  window.setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
