import type { PickerRow } from '@lintel/commands';
import type { Ask } from '../meta';
import type { Entry } from './entries';

/**
 * The palette's questions for one command, as plain data the key handler and the view both read: the
 * required arguments one by one, then (where the command has any) the list of its optional ones, where each
 * picked is asked in turn and added to the command line, and "Run" runs it.
 */
export interface Asking {
  entry: Entry;
  /** the required argument asked (`step < entry.asks.length`), or the optional ones (`step === length`) */
  step: number;
  /** the answers as the command line takes them (ids for rows) */
  values: string[];
  /** the answers as shown (names for rows) */
  labels: string[];
  /** optional arguments added from the list, in order */
  extra: Array<{ ask: Ask; value: string; label: string }>;
  /** the optional argument being answered; null on the list of them */
  option: Ask | null;
  /** what is typed: the answer, the search of rows, or the filter of the optional arguments */
  text: string;
  choice: number;
  problem: string | null;
  /** rows of another family: those found for `search`, or why they could not be listed */
  found: { search: string; rows: PickerRow[] } | null;
  failed: string | null;
  /** rows of another family picked with Tab, where the argument takes several */
  picked: PickerRow[];
  /** Enter came while the rows of what is typed were being searched */
  entered: boolean;
}

export interface Answer {
  value: string;
  label: string;
}

/** A question, fresh: nothing typed, nothing found. */
export function startAsking(
  entry: Entry,
  step = 0,
  values: string[] = [],
  labels: string[] = [],
  extra: Asking['extra'] = [],
): Asking {
  return {
    entry,
    step,
    values,
    labels,
    extra,
    option: null,
    text: '',
    choice: 0,
    problem: null,
    found: null,
    failed: null,
    picked: [],
    entered: false,
  };
}

/** The argument asked now: a required one, an optional one picked from the list, or none (the list). */
export const askOf = (a: Asking): Ask | null =>
  a.step < a.entry.asks.length ? a.entry.asks[a.step]! : a.option;

/** At the list of optional arguments (after the required ones). */
export const atOptions = (a: Asking): boolean => a.step >= a.entry.asks.length && !a.option;

/** The optional arguments not given yet whose label or flag has the filter typed. */
export function optionsLeft(a: Asking): Ask[] {
  const given = new Set(a.extra.map((x) => x.ask.flag));
  const filter = a.text.trim().toLocaleLowerCase();
  return a.entry.options.filter(
    (o) =>
      !given.has(o.flag) &&
      (!filter || o.label.toLocaleLowerCase().includes(filter) || (o.flag ?? '').includes(filter)),
  );
}

/**
 * The answer taken: the next required argument, the list of optional ones (after the last required one
 * or an optional one answered), or `run` when nothing is left to ask.
 */
export function answered(a: Asking, answer: Answer): Asking | 'run' {
  if (a.option) {
    const extra = [...a.extra, { ask: a.option, ...answer }];
    return startAsking(a.entry, a.entry.asks.length, a.values, a.labels, extra);
  }
  const values = [...a.values, answer.value];
  const labels = [...a.labels, answer.label];
  if (a.step + 1 < a.entry.asks.length) return startAsking(a.entry, a.step + 1, values, labels);
  if (!a.entry.options.length) return 'run';
  return startAsking(a.entry, a.entry.asks.length, values, labels);
}

/** An optional switch picked from the list (`--dry-run`): added at once, as `label` ("yes"). */
export function switchedOn(a: Asking, ask: Ask, label: string): Asking {
  return startAsking(a.entry, a.entry.asks.length, a.values, a.labels, [
    ...a.extra,
    { ask, value: '', label },
  ]);
}

/** Esc: the optional argument back to the list, the list back to the last required one, or out (null). */
export function back(a: Asking): Asking | null {
  if (a.option) return startAsking(a.entry, a.step, a.values, a.labels, a.extra);
  if (a.step === 0) return null;
  const prev = a.step - 1;
  const to = startAsking(a.entry, prev, a.values.slice(0, prev), a.labels.slice(0, prev));
  // a typed answer comes back to be changed; rows are listed afresh
  if (!a.entry.asks[prev]?.ref) to.text = a.values[prev] ?? '';
  return to;
}

/** A row as an answer reads: its name, with the hint that tells rows of one name apart. */
export const rowName = (r: PickerRow) => (r.hint ? `${r.name} (${r.hint})` : r.name);

/** An answer that is all ids (`4`, `4,7`): what a person may type where rows could not be listed. */
const IDS = /^\d+(\s*,\s*\d+)*$/;

/**
 * What Enter takes at a step that asks for rows: those picked with Tab, else the highlighted one, else ids
 * typed; `searching` while the rows of what is typed have not come yet.
 */
export function rowAnswer(a: Asking): Answer | null | 'searching' {
  const search = a.text.trim();
  const rows = a.found?.search === search ? a.found.rows : null;
  const chosen = a.picked.length ? a.picked : rows?.[a.choice] ? [rows[a.choice]!] : [];
  if (chosen.length)
    return { value: chosen.map((r) => r.id).join(','), label: chosen.map(rowName).join(', ') };
  if (IDS.test(search)) return { value: search.replace(/\s+/g, ''), label: search };
  return rows || a.failed ? null : 'searching';
}

/**
 * The command line the answers make: the command's words, positional values in order, then `--flag value`
 * pairs of the required arguments and of the optional ones added (a switch alone: `--dry-run`).
 */
export function argvOf(entry: Entry, values: readonly string[], extra: Asking['extra'] = []): string[] {
  const positional: string[] = [];
  const flags: string[] = [];
  entry.asks.forEach((ask, i) => {
    if (i >= values.length) return;
    const v = values[i]!;
    if (ask.flag) flags.push(ask.flag, v);
    else positional.push(v);
  });
  for (const x of extra) flags.push(...(x.ask.switch ? [x.ask.flag!] : [x.ask.flag!, x.value]));
  return [...entry.words, ...positional, ...flags];
}

/** A command line as a person would type it: words with spaces or quotes in single quotes. */
export function shellLine(argv: readonly string[]): string {
  return ['lintel', ...argv]
    .map((a) => (a === '' || /[^\w@%+=:,./-]/.test(a) ? `'${a.replace(/'/g, `'\\''`)}'` : a))
    .join(' ');
}
