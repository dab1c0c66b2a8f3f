/**
 * Filling a generated form from the keyboard alone, from a family's declaration: every required field of
 * the create schema gets a value its schema accepts, typed, picked or ticked with keys; the caller then
 * checks the stored record against what was entered (`checkRecord`). A field kind this cannot fill fails
 * loudly: teach it here, once, for every family.
 */
import type { Page } from 'playwright-core';
import type { ZodType } from 'zod';
import { getCommand, type AnyResource, type CommandId } from '@lintel/commands';
import { DUMMY_PASSWORD, type ApiClient } from '@lintel/core';
import { expect } from 'vitest';
import { commandFields } from '../../apps/web/src/forms/fields';
import type { FieldSpec } from '../../apps/web/src/forms/schema';
import { WAIT } from './web';

/** What was entered in one field, to compare with the stored record. */
export type Entered =
  | { path: string; kind: 'text'; value: string }
  | { path: string; kind: 'number'; value: number }
  | { path: string; kind: 'boolean'; value: boolean }
  | { path: string; kind: 'enum'; value: string }
  | { path: string; kind: 'refs'; family: string; names: string[] }
  | { path: string; kind: 'codes'; codes: string[] };

/**
 * The fields a create form must have filled, as the console's form shows them (references as pickers):
 * not optional, not defaulted, not hidden. A nullable one (a group's parent) is filled too.
 */
export function requiredFields(resource: AnyResource): FieldSpec[] {
  // a group of fields (an integration's settings) is filled field by field, as the form shows it
  const flat = (fields: readonly FieldSpec[]): FieldSpec[] =>
    fields.flatMap((f) => (f.type === 'object' && f.fields ? flat(f.fields) : [f]));
  return flat(commandFields(`${resource.noun}.create`).filter((f) => !f.optional && !f.hidden)).filter(
    (f) => !f.optional && !f.hidden,
  );
}

/** The schema of the field at `path` (`name`, `axxon_one_settings.server_url`) in an object schema. */
function schemaAt(schema: ZodType, path: string): ZodType | undefined {
  let at: ZodType | undefined = schema;
  for (const key of path.split('.')) {
    let inner = at as unknown as { unwrap?: () => ZodType; def?: { type?: string } };
    // through optional, nullable and default wrappers
    while (inner?.unwrap && inner.def?.type !== 'object') inner = inner.unwrap() as never;
    at = shapeOf(inner as unknown as ZodType)[key];
  }
  return at;
}

/**
 * A text its schema accepts, carrying `tag` so the row is found again: a name with a space, a code
 * without one, a colour, an e-mail, a phone number, digits alone (a
 * virtual number), in that order of preference.
 */
export function textFor(schema: ZodType, tag: string): string {
  const digits = [...tag].map((c) => parseInt(c, 16) % 10).join('');
  const candidates = [
    `Kb ${tag}`,
    `kb${tag}`,
    `#${tag.padEnd(6, '0').slice(0, 6)}`,
    `kb${tag}@example.test`,
    `+7900${digits.padEnd(7, '0').slice(0, 7)}`,
    `9${digits}`.slice(0, 20),
    // an address (a webhook's), a long key (a secret), a provider's SIP URI, a day
    `https://kb${tag}.example.test/hook`,
    `kb-key-${tag}-${tag}-${tag}`,
    `sip:kb${tag}@provider.example.test:5060`,
    '2026-12-31',
  ];
  const fit = candidates.find((c) => schema.safeParse(c).success);
  if (!fit)
    throw new Error(`no keyboard value for a text field: add a candidate in tests/support/keyboard-form.ts`);
  return fit;
}

const shapeOf = (schema: ZodType) =>
  (schema as unknown as { shape?: Record<string, ZodType>; def?: { shape?: Record<string, ZodType> } })
    .shape ?? {};

/**
 * Types a time of day (`18:30`) into the focused time input from the keyboard, segment by segment, as the
 * browser's locale orders and writes them (a 12-hour locale takes the hour, the minutes and A or P).
 */
export async function typeTime(page: Page, clock: string): Promise<void> {
  const [h, m] = clock.split(':').map(Number) as [number, number];
  const twelve = await page.evaluate(
    () => new Intl.DateTimeFormat(navigator.language, { hour: 'numeric' }).resolvedOptions().hour12 === true,
  );
  const two = (n: number) => String(n).padStart(2, '0');
  if (!twelve) return page.keyboard.type(`${two(h)}${two(m)}`);
  await page.keyboard.type(`${two(h % 12 || 12)}${two(m)}`);
  await page.keyboard.type(h < 12 ? 'A' : 'P');
}

/** Which field of the form has the cursor: its path (`name`, `role`, `permissions`), or null. */
function focusedField(page: Page, form: string): Promise<string | null> {
  return page.evaluate((f) => {
    const el = document.activeElement;
    if (!el || !el.closest(`[data-testid="${f}"]`)) return null;
    const set = el.closest('fieldset[data-testid^="field-"]');
    if (set) return set.getAttribute('data-testid')!.slice('field-'.length);
    const id = el.getAttribute('data-testid');
    if (id?.startsWith('field-')) return id.slice('field-'.length);
    return el.getAttribute('name');
  }, form);
}

/** Tab (forward, round the form) until the field `path` has the cursor. */
export async function tabToField(page: Page, form: string, path: string, max = 250): Promise<void> {
  for (let i = 0; i < max; i++) {
    if ((await focusedField(page, form)) === path) return;
    await page.keyboard.press('Tab');
  }
  throw new Error(`the field ${path} of ${form} was not reached with Tab`);
}

/** Opens the focused picker with ↓, waits for its first row, takes it with Enter; returns its name. */
async function pickFirst(page: Page): Promise<string> {
  await page.keyboard.press('ArrowDown');
  const handle = await page.waitForFunction(
    () => {
      const list = document.getElementById(document.activeElement?.getAttribute('aria-controls') ?? '');
      return (
        list?.querySelector<HTMLElement>('[role="option"][data-active][data-name]')?.dataset.name ?? null
      );
    },
    undefined,
    { timeout: WAIT },
  );
  const name = (await handle.jsonValue()) as string;
  await page.keyboard.press('Enter');
  return name;
}

/** Fills the field that has the cursor, by its kind, with keys only; returns what went in. */
async function fillField(page: Page, resource: AnyResource, f: FieldSpec, tag: string): Promise<Entered> {
  switch (f.type) {
    case 'text': {
      const value = textFor(schemaAt(resource.createArgs, f.path)!, tag);
      // a date input takes its digits segment by segment, in the order of the browser's locale
      if (await page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.type === 'date')) {
        const [year, month, day] = value.split('-') as [string, string, string];
        const order = await page.evaluate(() =>
          new Intl.DateTimeFormat(navigator.language)
            .formatToParts(new Date(2026, 11, 31))
            .filter((p) => p.type !== 'literal')
            .map((p) => p.type),
        );
        const parts: Record<string, string> = { year, month, day };
        for (const k of order) await page.keyboard.type(parts[k] ?? '');
        return { path: f.path, kind: 'text', value };
      }
      await page.keyboard.press('Control+a');
      await page.keyboard.type(value);
      return { path: f.path, kind: 'text', value };
    }
    case 'number': {
      const value = f.min ?? 1;
      await page.keyboard.press('Control+a');
      await page.keyboard.type(String(value));
      return { path: f.path, kind: 'number', value };
    }
    case 'boolean':
      await page.keyboard.press('Space');
      return { path: f.path, kind: 'boolean', value: true };
    case 'enum': {
      await page.keyboard.press('ArrowDown');
      const value = await page.evaluate(() => (document.activeElement as HTMLSelectElement).value);
      return { path: f.path, kind: 'enum', value };
    }
    case 'id':
    case 'ids':
      return { path: f.path, kind: 'refs', family: f.family!, names: [await pickFirst(page)] };
    case 'strings': {
      // a list of codes: the permissions' boxes (Tab past the filter and the first category's box, Space
      // ticks the first code); any other list of strings is a text area, one per line
      // a list the schema enumerates (a schedule's days): a box per code, Space ticks the first
      const code = await page.evaluate(() =>
        document.activeElement?.getAttribute('type') === 'checkbox'
          ? (document.activeElement as HTMLInputElement).value
          : null,
      );
      if (code) {
        await page.keyboard.press('Space');
        return { path: f.path, kind: 'codes', codes: [code] };
      }
      const boxes = await page.evaluate(() => document.activeElement?.getAttribute('type') === 'search');
      if (boxes) {
        await page.keyboard.press('Tab');
        await page.keyboard.press('Tab');
        await page.keyboard.press('Space');
        const code = await page.evaluate(() => (document.activeElement as HTMLElement).dataset.code ?? '');
        expect(code, `${f.path}: a code's box has the cursor`).not.toBe('');
        return { path: f.path, kind: 'codes', codes: [code] };
      }
      const value = `kb${tag}`;
      await page.keyboard.type(value);
      return { path: f.path, kind: 'codes', codes: [value] };
    }
    default:
      throw new Error(
        `${resource.noun}.create: the journeys cannot fill a ${f.type} field (${f.path}) from the keyboard ` +
          'yet: teach tests/support/keyboard-form.ts',
      );
  }
}

/**
 * Fills every required field of `resource`'s create form inside `form` (a test id: `form-page` or
 * `command-dialog`) with keys only, and returns what went into each.
 */
export async function fillRequired(
  page: Page,
  form: string,
  resource: AnyResource,
  tag: string,
): Promise<Entered[]> {
  const out: Entered[] = [];
  for (const f of requiredFields(resource)) {
    await tabToField(page, form, f.path);
    out.push(await fillField(page, resource, f, tag));
  }
  return out;
}

/**
 * Approves the form with Ctrl+Enter until `done()`: when the console refuses a value the schema left open
 * (an e-mail a registration link needs), the cursor is on the field to fix; it is filled like the others and
 * approved again. Returns what went into those fields.
 */
export async function approveFixing(
  page: Page,
  form: string,
  resource: AnyResource,
  tag: string,
  done: () => Promise<boolean>,
): Promise<Entered[]> {
  const out: Entered[] = [];
  const fields = commandFields(`${resource.noun}.create`);
  for (let round = 0; round < 4; round++) {
    await page.keyboard.press('Control+Enter');
    let refused: string | null = null;
    await expect
      .poll(
        async () => {
          if (await done()) return 'done';
          refused = await page.evaluate((f) => {
            const el = document.activeElement;
            if (!el?.closest(`[data-testid="${f}"]`)) return null;
            const marked =
              el.closest('[aria-invalid="true"]') ?? (el.getAttribute('aria-invalid') ? el : null);
            if (!marked) return null;
            const id = el.getAttribute('data-testid');
            return id?.startsWith('field-') ? id.slice('field-'.length) : el.getAttribute('name');
          }, form);
          return refused ? 'refused' : 'waiting';
        },
        { timeout: WAIT },
      )
      .not.toBe('waiting');
    if (!refused) return out;
    const f = fields.find((x) => x.path === refused);
    if (!f) throw new Error(`${resource.noun}.create refused ${refused}, which the journeys cannot fill`);
    out.push(await fillField(page, resource, f, tag));
  }
  throw new Error(`${resource.noun}.create: still refused after filling what it asked for`);
}

const idsOf = (v: unknown): number[] =>
  (Array.isArray(v) ? v : [v]).flatMap((x) =>
    typeof x === 'number'
      ? [x]
      : x && typeof x === 'object' && 'id' in x
        ? [Number((x as { id: unknown }).id)]
        : [],
  );

/** The stored record holds what was entered: texts as typed, picked rows by their names, ticked codes. */
export async function checkRecord(
  api: ApiClient,
  record: Record<string, unknown>,
  entered: readonly Entered[],
): Promise<void> {
  for (const e of entered) {
    const stored = e.path
      .split('.')
      .reduce<unknown>(
        (v, k) => (v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined),
        record,
      );
    switch (e.kind) {
      case 'text':
        // a secret is never read back: its placeholder says one is set
        if (String(stored) === DUMMY_PASSWORD) break;
        expect(String(stored).toLowerCase(), e.path).toBe(e.value.toLowerCase());
        break;
      case 'number':
      case 'boolean':
      case 'enum':
        expect(stored, e.path).toBe(e.value);
        break;
      case 'codes':
        expect(stored, e.path).toEqual(expect.arrayContaining(e.codes));
        break;
      case 'refs': {
        const ids = idsOf(stored);
        expect(ids.length, `${e.path} holds a row`).toBeGreaterThan(0);
        const names = await Promise.all(
          ids.map(
            async (id) =>
              (
                (await getCommand(`${e.family}.get` as CommandId).run({ api }, { id } as never)) as {
                  name: string;
                }
              ).name,
          ),
        );
        expect(names.sort(), e.path).toEqual([...e.names].sort());
        break;
      }
    }
  }
}
