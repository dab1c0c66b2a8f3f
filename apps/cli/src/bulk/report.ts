import type { ImportReport, ImportRowError } from '@lintel/commands';
import { table } from '../families/render';
import { hasText, t, tr } from '../i18n';

const fmt = (n: number) => n.toLocaleString('en');

/** Arrays read better joined in a sentence. */
const textParams = (params: Record<string, unknown> = {}) =>
  Object.fromEntries(Object.entries(params).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : v]));

/**
 * A row's problem in words: a field rule (`errors:validation.<rule>`) or a catalogue key (`errors:http.<key>`),
 * with what its message does not say itself (the values not found, why a role or group is refused).
 */
export function problemText(e: Pick<ImportRowError, 'rule' | 'key' | 'params'>): string {
  const params = textParams(e.params);
  if (e.rule) {
    const key = `errors:validation.${e.rule}`;
    return tr(hasText(key, params) ? key : 'errors:validation.invalid_value', params);
  }
  const key = `errors:http.${e.key ?? ''}`;
  let text = e.key && hasText(key) ? tr(key, params) : tr('errors:default');
  if (typeof params.values === 'string' && params.values) text += `: ${params.values}`;
  const reason = typeof e.params?.reason === 'string' ? `cli:bulk.reasons.${e.params.reason}` : null;
  if (reason && hasText(reason)) text += ` (${tr(reason, params)})`;
  return text;
}

/** `[[5, 11], [14, 14]]` → `5-11, 14`, the first `max` ranges. */
export function rangesText(ranges: ReadonlyArray<readonly [number, number]>, max = 40): string {
  const shown = ranges.slice(0, max).map(([a, b]) => (a === b ? String(a) : `${a}-${b}`));
  return shown.join(', ') + (ranges.length > max ? ', …' : '');
}

/** Breaks a long line between words to fit `width` columns, the lines after the first indented by two. */
export function wrap(text: string, width: number): string {
  const max = Math.max(20, width - 1);
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    const next = line ? `${line} ${word}` : word;
    if ([...next].length > max && line) {
      lines.push(line);
      line = `  ${word}`;
    } else line = next;
  }
  lines.push(line);
  return lines.join('\n');
}

/** The report for a person: counts, what went in, the rejected lines, the first problems in a table. */
export function reportText(report: ImportReport, file: string, width: number): string {
  const out: string[] = [
    t('bulk.report.summary', {
      file,
      rows: fmt(report.rows),
      valid: fmt(report.valid),
      invalid: fmt(report.invalid),
    }),
  ];
  if (report.committed) out.push(t('bulk.report.inserted', { count: fmt(report.inserted) }));
  else if (report.reason === 'dry_run') {
    out.push(t('bulk.report.dry_run', { count: fmt(report.would_insert) }));
    if (report.invalid && !report.continue_on_error && report.valid)
      out.push(t('bulk.report.hint', { valid: fmt(report.valid) }));
  } else {
    out.push(t('bulk.report.refused', { invalid: fmt(report.invalid) }));
    if (report.valid) out.push(t('bulk.report.hint', { valid: fmt(report.valid) }));
  }
  if (report.rejected_lines.length)
    out.push(wrap(t('bulk.report.rejected_lines', { lines: rangesText(report.rejected_lines) }), width));
  if (report.errors.length) {
    out.push(
      '',
      table(
        [t('bulk.report.line'), t('bulk.report.field'), t('bulk.report.problem')],
        report.errors.map((e) => [String(e.line), e.field, problemText(e)]),
        width,
      ),
    );
  }
  if (report.errors_total > report.errors.length) {
    out.push(
      '',
      t('bulk.report.more', { count: fmt(report.errors_total - report.errors.length) }),
      t('bulk.report.by_kind'),
    );
    for (const c of report.error_counts) out.push(`  ${c.field}: ${problemText(c)} — ${fmt(c.count)}`);
  }
  return out.join('\n');
}
