import { describe, expect, it } from 'vitest';
import {
  answered,
  argvOf,
  askOf,
  atOptions,
  back,
  optionsLeft,
  rowAnswer,
  startAsking,
  switchedOn,
} from './asking';
import type { Entry } from './entries';

const entry: Entry = {
  words: ['users', 'create'],
  title: 'Create user',
  titles: ['Create user'],
  asks: [
    { label: 'Login', flag: '--login' },
    { label: 'Role', flag: '--role', ref: { family: 'role', many: false } },
  ],
  options: [
    { label: 'E-mail', flag: '--email' },
    { label: 'Description', flag: '--description' },
  ],
};

describe('the questions of the palette', () => {
  it('asks the required arguments, then lists the optional ones, and builds the command line', () => {
    let a = startAsking(entry);
    expect(askOf(a)?.label).toBe('Login');
    a = answered(a, { value: 'ann', label: 'ann' }) as typeof a;
    expect(askOf(a)?.label).toBe('Role');
    a = answered(a, { value: '5', label: 'Concierge' }) as typeof a;
    expect(atOptions(a)).toBe(true);
    expect(askOf(a)).toBeNull();
    expect(optionsLeft(a).map((o) => o.flag)).toEqual(['--email', '--description']);

    a = { ...a, option: entry.options[0]! };
    a = answered(a, { value: 'ann@example.com', label: 'ann@example.com' }) as typeof a;
    expect(atOptions(a)).toBe(true);
    expect(optionsLeft(a).map((o) => o.flag)).toEqual(['--description']);
    expect(argvOf(a.entry, a.values, a.extra)).toEqual([
      'users',
      'create',
      '--login',
      'ann',
      '--role',
      '5',
      '--email',
      'ann@example.com',
    ]);
  });

  it('runs after the last required argument when there is nothing optional', () => {
    const plain = { ...entry, options: [] };
    const a = answered(startAsking(plain, 1, ['ann'], ['ann']), { value: '5', label: 'Concierge' });
    expect(a).toBe('run');
  });

  it('filters the optional arguments by label or flag', () => {
    const a = { ...startAsking(entry, 2, ['ann', '5'], ['ann', 'Concierge']), text: 'MAIL' };
    expect(optionsLeft(a).map((o) => o.flag)).toEqual(['--email']);
    expect(optionsLeft({ ...a, text: 'descr' }).map((o) => o.flag)).toEqual(['--description']);
  });

  it('goes back with Esc: an optional one to the list, the list to the last required one, then out', () => {
    const list = startAsking(
      entry,
      2,
      ['ann', '5'],
      ['ann', 'Concierge'],
      [{ ask: entry.options[0]!, value: 'a@b.c', label: 'a@b.c' }],
    );
    const asking = { ...list, option: entry.options[1]!, text: 'typed' };
    expect(back(asking)).toMatchObject({ step: 2, option: null, text: '', extra: list.extra });
    // rows are listed afresh rather than typed back
    expect(back(list)).toMatchObject({ step: 1, values: ['ann'], text: '' });
    expect(back(startAsking(entry, 1, ['ann'], ['ann']))).toMatchObject({ step: 0, text: 'ann' });
    expect(back(startAsking(entry))).toBeNull();
  });

  it('takes rows picked, else the one highlighted, else ids typed; waits while searching', () => {
    const rows = [
      { id: 4, name: 'Entrance 1', hint: 'Building 1' },
      { id: 67, name: 'Entrance 1', hint: 'Building 2' },
    ];
    const a = { ...startAsking(entry, 1, ['ann'], ['ann']), text: 'entr', found: { search: 'entr', rows } };
    expect(rowAnswer({ ...a, choice: 1 })).toEqual({ value: '67', label: 'Entrance 1 (Building 2)' });
    expect(rowAnswer({ ...a, picked: rows })).toEqual({
      value: '4,67',
      label: 'Entrance 1 (Building 1), Entrance 1 (Building 2)',
    });
    expect(rowAnswer({ ...a, text: 'entra' })).toBe('searching');
    expect(rowAnswer({ ...a, text: '7, 9', found: null, failed: 'refused' })).toEqual({
      value: '7,9',
      label: '7, 9',
    });
    expect(rowAnswer({ ...a, text: 'x', found: { search: 'x', rows: [] } })).toBeNull();
  });

  it('a command with optional arguments only starts at their list; a switch goes in alone', () => {
    const list: Entry = {
      words: ['users', 'list'],
      title: 'List users',
      titles: ['List users'],
      asks: [],
      options: [
        { label: 'Search', flag: '--search' },
        { label: 'All pages', flag: '--all', switch: true },
      ],
    };
    let a = startAsking(list);
    expect(atOptions(a)).toBe(true);
    a = switchedOn(a, list.options[1]!, 'yes');
    expect(atOptions(a)).toBe(true);
    expect(a.extra.map((x) => [x.ask.flag, x.label])).toEqual([['--all', 'yes']]);
    expect(optionsLeft(a).map((o) => o.flag)).toEqual(['--search']);
    a = answered({ ...a, option: list.options[0]! }, { value: 'ann lee', label: 'ann lee' }) as typeof a;
    expect(argvOf(list, a.values, a.extra)).toEqual(['users', 'list', '--all', '--search', 'ann lee']);
    // Esc at the list of a command with nothing required leaves it
    expect(back(startAsking(list))).toBeNull();
  });
});
