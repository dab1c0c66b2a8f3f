import fs from 'node:fs';
import { CliError } from '../errors';
import { ExitCode } from '../exit-codes';

/** One step of a field's key: a property, or `[]` (append to a list). */
type Step = string | null;

const NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?$/;

/** `name`, `profile[phone]`, `ids[]`: the steps of a `--field` key (as `gh api` spells them). */
export function parseKey(key: string): Step[] | null {
  const m = /^([^[\]=]+)((?:\[[^[\]]*\])*)$/.exec(key);
  if (!m) return null;
  const rest = [...m[2]!.matchAll(/\[([^[\]]*)\]/g)].map((x) => (x[1] === '' ? null : x[1]!));
  // `[]` only at the end: `a[][b]` would need a list of objects
  if (rest.slice(0, -1).includes(null)) return null;
  return [m[1]!, ...rest];
}

/**
 * The value of `--field key=value`: `true`, `false`, `null`, numbers, and JSON lists and objects
 * (`ids=[1,2]`) are JSON values, `@file` the file's text, anything else a string. `--raw-field` keeps every
 * value a string.
 */
export function fieldValue(text: string, typed: boolean): unknown {
  if (!typed) return text;
  if (/^\s*[[{]/.test(text)) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new CliError('bad_field', ExitCode.usage, { field: text });
    }
  }
  if (text === 'true') return true;
  if (text === 'false') return false;
  if (text === 'null') return null;
  if (NUMBER.test(text)) return Number(text);
  if (text.startsWith('@')) {
    const file = text.slice(1);
    try {
      return fs.readFileSync(file, 'utf8').replace(/\r?\n$/, '');
    } catch (err) {
      throw new CliError('data_unreadable', ExitCode.usage, {
        file,
        detail: String((err as Error)?.message ?? err),
      });
    }
  }
  return text;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Sets `key=value` into `target`, making the objects and lists on the way. */
export function setField(target: Record<string, unknown>, spec: string, typed: boolean): void {
  // `ids[]` alone: an empty list (as `gh api` takes it)
  if (!spec.includes('=') && spec.endsWith('[]')) {
    const steps = parseKey(spec);
    if (steps && steps.length >= 2) {
      let cur: Record<string, unknown> = target;
      for (const step of steps.slice(0, -2)) {
        if (!isObject(cur[step!])) cur[step!] = {};
        cur = cur[step!] as Record<string, unknown>;
      }
      const last = steps[steps.length - 2]!;
      if (!Array.isArray(cur[last])) cur[last] = [];
      return;
    }
  }
  const eq = spec.indexOf('=');
  const steps = eq > 0 ? parseKey(spec.slice(0, eq)) : null;
  if (!steps) throw new CliError('bad_field', ExitCode.usage, { field: spec });
  const value = fieldValue(spec.slice(eq + 1), typed);
  let cur: Record<string, unknown> = target;
  steps.forEach((step, i) => {
    const last = i === steps.length - 1;
    const next = steps[i + 1];
    if (step === null) return; // `[]`, handled by the step before it
    if (last) {
      cur[step] = value;
      return;
    }
    if (next === null) {
      const list = Array.isArray(cur[step]) ? (cur[step] as unknown[]) : [];
      list.push(value);
      cur[step] = list;
      return;
    }
    if (!isObject(cur[step])) cur[step] = {};
    cur = cur[step] as Record<string, unknown>;
  });
}
