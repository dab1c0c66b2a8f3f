import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { getCommand, pathParams } from '@lintel/commands';
import { ListQuery } from '@lintel/core';
import { deriveFlags, parseFlag, setPath, type FlagSpec } from './flags';

const byName = (flags: FlagSpec[]) => Object.fromEntries(flags.map((f) => [f.name, f]));

describe('flags from an argument schema', () => {
  it('walks strings, numbers, booleans, enums, lists and nested objects', () => {
    const cmd = getCommand('user.create');
    const { flags, positionals } = deriveFlags(cmd.args, { positional: pathParams(cmd.http.path) });
    expect(positionals).toEqual([]);
    const f = byName(flags);
    expect(f.login).toMatchObject({ kind: 'text', required: true, path: ['login'] });
    expect(f.description).toMatchObject({ kind: 'text', required: false });
    expect(f.email).toMatchObject({ kind: 'text', nullable: true, required: false });
    expect(f.role).toMatchObject({ kind: 'number', required: true });
    expect(f.domains).toMatchObject({ kind: 'list', item: 'number', required: true });
    expect(f['send-registration-link']).toMatchObject({
      kind: 'boolean',
      hasDefault: true,
      defaultValue: true,
      required: false,
    });
    expect(f['profile.phone']).toMatchObject({ kind: 'text', path: ['profile', 'phone'], required: false });
    expect(f['profile.time-format']).toMatchObject({
      kind: 'choice',
      choices: ['DD-MM-YYYY', 'MM-DD-YYYY', 'YYYY-MM-DD'],
    });
    expect(f['profile.sip-number-id']).toMatchObject({ kind: 'number', nullable: true });
  });

  it('makes path parameters positional, and lists leave filters and match to --where', () => {
    const update = getCommand('role.update');
    const { flags, positionals } = deriveFlags(update.args, { positional: pathParams(update.http.path) });
    expect(positionals.map((p) => [p.name, p.kind, p.required])).toEqual([['id', 'number', true]]);
    expect(flags.map((f) => f.name)).not.toContain('id');

    const list = deriveFlags(ListQuery, { skip: ['filters', 'match'] }).flags;
    expect(list.map((f) => f.name)).toEqual(['page', 'limit', 'sort', 'search']);
    expect(byName(list).limit).toMatchObject({ kind: 'number', hasDefault: true, defaultValue: 50 });
  });

  it('reads a preprocessed boolean (roles’ gently) as a boolean, and deep or odd fields as JSON', () => {
    const del = getCommand('role.delete');
    expect(byName(deriveFlags(del.args, { positional: ['id'] }).flags).gently).toMatchObject({
      kind: 'boolean',
      defaultValue: true,
    });
    const group = byName(deriveFlags(getCommand('group.create').args).flags);
    expect(group['device-status-notify']!.kind).toBe('json');
    expect(group['license-settings.notifications.period']).toMatchObject({ kind: 'choice' });
    expect(group['license-settings.licenses']!.kind).toBe('json');
    const odd = byName(
      deriveFlags(
        z.object({
          r: z.record(z.string(), z.number()),
          json: z.string(),
          u: z.union([z.number(), z.string()]),
        }),
      ).flags,
    );
    expect(odd.r!.kind).toBe('json');
    expect(odd.u!.kind).toBe('json');
    // a field named like a generic flag is given through --data only
    expect(odd.json).toBeUndefined();
  });
});

describe('flag values', () => {
  const spec = (over: Partial<FlagSpec>): FlagSpec => ({
    path: ['x'],
    name: 'x',
    kind: 'text',
    required: false,
    nullable: false,
    hasDefault: false,
    ...over,
  });

  it('parses numbers, booleans, choices, lists and JSON, naming the field and rule on failure', () => {
    expect(parseFlag(spec({ kind: 'number' }), '42')).toEqual({ ok: true, value: 42 });
    expect(parseFlag(spec({ kind: 'number' }), '4x')).toEqual({
      ok: false,
      problem: { field: 'x', rule: 'invalid_type', params: { expected: 'number' } },
    });
    expect(parseFlag(spec({ kind: 'number' }), '')).toMatchObject({ ok: false });
    expect(parseFlag(spec({ kind: 'boolean' }), true)).toEqual({ ok: true, value: true });
    expect(parseFlag(spec({ kind: 'boolean' }), 'false')).toEqual({ ok: true, value: false });
    expect(parseFlag(spec({ kind: 'boolean' }), 'maybe')).toMatchObject({
      ok: false,
      problem: { rule: 'invalid_type' },
    });
    expect(parseFlag(spec({ kind: 'choice', choices: ['a', 'b'] }), 'c')).toMatchObject({
      ok: false,
      problem: { rule: 'one_of', params: { values: ['a', 'b'] } },
    });
    expect(parseFlag(spec({ kind: 'list', item: 'number' }), ['3,4', '5'])).toEqual({
      ok: true,
      value: [3, 4, 5],
    });
    expect(parseFlag(spec({ kind: 'list', item: 'text' }), [''])).toEqual({ ok: true, value: [] });
    expect(parseFlag(spec({ kind: 'list', item: 'number' }), ['3,x'])).toMatchObject({ ok: false });
    expect(parseFlag(spec({ kind: 'json' }), '{"a":1}')).toEqual({ ok: true, value: { a: 1 } });
    expect(parseFlag(spec({ kind: 'json' }), '{a')).toMatchObject({
      ok: false,
      problem: { rule: 'invalid_format' },
    });
  });

  it('gives null where the field allows it', () => {
    expect(parseFlag(spec({ kind: 'number', nullable: true }), 'null')).toEqual({ ok: true, value: null });
    expect(parseFlag(spec({ kind: 'text' }), 'null')).toEqual({ ok: true, value: 'null' });
  });

  it('sets nested paths over what --data gave', () => {
    const args: Record<string, unknown> = { profile: { address: 'Main St' }, name: 'x' };
    setPath(args, ['profile', 'phone'], '+4912345');
    setPath(args, ['name'], 'y');
    expect(args).toEqual({ profile: { address: 'Main St', phone: '+4912345' }, name: 'y' });
  });
});

describe('a time of day', () => {
  it("takes `09:00` as well as the seconds for a schedule's window, and names the field when neither", () => {
    const spec = deriveFlags(getCommand('schedule.create').args).flags.find((f) => f.name === 'time-from')!;
    expect(spec).toMatchObject({ kind: 'number', timeOfDay: true });
    expect(parseFlag(spec, '09:00')).toEqual({ ok: true, value: 32_400 });
    expect(parseFlag(spec, '32400')).toEqual({ ok: true, value: 32_400 });
    expect(parseFlag(spec, 'nine')).toMatchObject({
      ok: false,
      problem: { field: 'time_from', rule: 'invalid_type' },
    });
  });
});
