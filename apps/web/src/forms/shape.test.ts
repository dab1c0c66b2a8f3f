import { describe, expect, it } from 'vitest';
import { getCommand } from '@lintel/commands';
import { commandFields } from './fields';
import { DUMMY_PASSWORD, parseNumber, setAt, shapeArgs, toFormValues, valueAt } from './shape';
import type { FieldSpec } from './schema';

describe('fields from a command schema', () => {
  it('names pickers, passwords and long texts', () => {
    const byPath = new Map(commandFields('user.create').map((f) => [f.path, f]));
    expect(byPath.get('role')).toMatchObject({ type: 'id', family: 'role', optional: false });
    expect(byPath.get('domains')).toMatchObject({ type: 'ids', family: 'group', minLength: 1 });
    expect(byPath.get('markers')).toMatchObject({ type: 'ids', family: 'marker', optional: true });
    expect(byPath.get('password')).toMatchObject({ type: 'text', secret: true, minLength: 8 });
    expect(byPath.get('description')).toMatchObject({ multiline: true });
    expect(byPath.get('email')).toMatchObject({ email: true, nullable: true });
    expect(byPath.get('send_registration_link')).toMatchObject({ type: 'boolean', defaultValue: true });
    const profile = byPath.get('profile')!;
    expect(profile.type).toBe('object');
    expect(profile.fields!.map((f) => f.key)).not.toContain('sip_number_id');
    expect(profile.fields!.find((f) => f.key === 'time_format')!.options).toEqual([
      'DD-MM-YYYY',
      'MM-DD-YYYY',
      'YYYY-MM-DD',
    ]);

    expect(commandFields('group.create').find((f) => f.key === 'parent_id')).toMatchObject({
      type: 'id',
      family: 'group',
      nullable: true,
    });
    expect(commandFields('user.password').find((f) => f.key === 'id')).toMatchObject({
      type: 'id',
      family: 'user',
    });
    expect(commandFields('role.delete_all').find((f) => f.key === 'items')).toMatchObject({
      type: 'ids',
      family: 'role',
    });
    expect(commandFields('user.list').map((f) => f.key)).toEqual(['search']);
    expect(commandFields('role.create').find((f) => f.key === 'permissions')!.type).toBe('strings');
  });
});

describe('data shaping (spec part 2 §5)', () => {
  it('turns numeric strings into numbers, with a comma as decimal separator', () => {
    expect(parseNumber(' 12 ')).toBe(12);
    expect(parseNumber('1 000,5')).toBe(1000.5);
    expect(parseNumber('12a')).toBe('12a');
    const fields = commandFields('group.generate');
    const values = toFormValues(fields);
    const args = shapeArgs(
      fields,
      {
        ...values,
        id: 3,
        count: '25',
        prefix: 'Flat ',
        numeration: { ...(values.numeration as object), from: '10', except: '13, 14;15' },
      },
      'create',
    );
    expect(args).toMatchObject({
      id: 3,
      count: 25,
      prefix: 'Flat ',
      logic_number: null,
      numeration: { from: 10, except: [13, 14, 15] },
    });
    expect(getCommand('group.generate').args.safeParse(args).success).toBe(true);
  });

  it('sends emptied counts and limits as null', () => {
    const fields = commandFields('group.update');
    const values = toFormValues(fields, {
      name: 'A',
      parent_id: { id: 1, name: 'Root' },
      guest_identifier_limits: { max_passes_count: 5, max_period_days: null },
    });
    expect(values.parent_id).toBe(1);
    expect(valueAt(values, 'guest_identifier_limits.max_passes_count')).toBe('5');
    const changed = setAt(values, 'guest_identifier_limits.max_passes_count', '');
    const args = shapeArgs(fields, changed, 'update', values);
    expect(args).toEqual({ guest_identifier_limits: { max_passes_count: null, max_period_days: null } });
  });

  it('sends only what changed on update, and an emptied optional text as empty', () => {
    const fields = commandFields('user.update');
    const initial = toFormValues(fields, {
      login: 'anna',
      name: 'Anna',
      description: 'x',
      role: { id: 2, name: 'R' },
      domains: [{ id: 4, name: 'G' }],
      email: null,
    });
    expect(initial.role).toBe(2);
    expect(initial.domains).toEqual([4]);
    expect(shapeArgs(fields, initial, 'update', initial)).toEqual({});
    const edited = { ...initial, name: 'Anna K', description: '' };
    expect(shapeArgs(fields, edited, 'update', initial)).toEqual({ name: 'Anna K', description: '' });
  });

  it('leaves out empty optional fields on create and keeps required ones for the check', () => {
    const fields = commandFields('user.create');
    const args = shapeArgs(fields, toFormValues(fields), 'create');
    expect(args).not.toHaveProperty('description');
    expect(args).not.toHaveProperty('password');
    expect(args).toMatchObject({
      login: '',
      name: '',
      domains: [],
      send_registration_link: true,
      email: null,
    });
    const check = getCommand('user.create').args.safeParse(args);
    expect(check.success).toBe(false);
  });

  it('keeps a stored password as the dummy placeholder and does not send it unchanged', () => {
    const field: FieldSpec = {
      key: 'password',
      path: 'password',
      type: 'text',
      optional: true,
      nullable: false,
      hasDefault: false,
      secret: true,
    };
    const values = toFormValues([field], {}, ['password']);
    expect(values.password).toBe(DUMMY_PASSWORD);
    expect(shapeArgs([field], values, 'update', values)).toEqual({});
    expect(shapeArgs([field], { password: 'n3w-Secret' }, 'update', values)).toEqual({
      password: 'n3w-Secret',
    });
    expect(toFormValues([field], {}).password).toBe('');
  });

  it('writes into nested values and lists by dotted path', () => {
    const v = setAt({ a: { b: '1' }, l: [{ x: '1' }, { x: '2' }] }, 'l.1.x', '3');
    expect(v).toEqual({ a: { b: '1' }, l: [{ x: '1' }, { x: '3' }] });
    expect(valueAt(setAt(v, 'a.c', true), 'a.c')).toBe(true);
  });

  it("shows a schedule's window as times of day and sends seconds after midnight", () => {
    const fields = commandFields('schedule.update');
    expect(fields.find((f) => f.key === 'time_from')).toMatchObject({ type: 'number', timeOfDay: true });
    const values = toFormValues(fields, { name: 'Office', time_from: 32_400, time_to: 86_400 });
    // a time input holds `HH:MM`; the day's end is midnight there
    expect(values).toMatchObject({ time_from: '09:00', time_to: '00:00' });
    const args = shapeArgs(fields, setAt(values, 'time_from', '08:30'), 'update', values);
    expect(args).toEqual({ time_from: 30_600 });
    expect(getCommand('schedule.update').args.safeParse({ id: 1, ...args }).success).toBe(true);
    // a forward rule's period is a time of day too
    const period = commandFields('forward_rule.create').find((f) => f.key === 'period')!;
    expect(period.fields!.map((f) => [f.key, f.timeOfDay])).toEqual([
      ['from', true],
      ['to', true],
    ]);
  });
});
