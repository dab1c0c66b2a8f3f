import { describe, expect, it } from 'vitest';
import type { CliContext } from '../context';
import { createProgram } from '../program';
import { RunSession } from './session';
import { focusOf } from './tree';

const ctx = {
  env: { LINTEL_CONFIG_DIR: '/nonexistent-lintel-config' },
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
} as CliContext;
const verbsOf = (focus: string | undefined, ...path: string[]) => {
  let cmd = createProgram(ctx, { session: new RunSession(ctx), profile: null, focus });
  for (const word of path) cmd = cmd.commands.find((c) => c.name() === word)!;
  return cmd.commands.map((c) => c.name()).sort();
};

describe("a command line builds only its family's verbs", () => {
  it('takes the first word, help’s subject, or nothing for the program’s own help and version', () => {
    expect(focusOf(['users', 'list', '--json'])).toBe('users');
    expect(focusOf(['help', 'roles'])).toBe('roles');
    expect(focusOf(['help'])).toBe('');
    expect(focusOf(['--help'])).toBe('');
    expect(focusOf(['-V'])).toBe('');
    // an option first: everything is built, as before
    expect(focusOf(['--json', 'users'])).toBeUndefined();
    expect(focusOf([])).toBeUndefined();
  });

  it('builds the focused family (and the families nested under it) whole, and the others as names only', () => {
    const whole = verbsOf(undefined, 'roles');
    expect(whole).toEqual(expect.arrayContaining(['create', 'list', 'export']));
    expect(verbsOf('roles', 'roles')).toEqual(whole);
    expect(verbsOf('users', 'roles')).toEqual([]);
    // every family is still there by name: an unknown word is told apart from a family's
    expect(verbsOf('users')).toEqual(verbsOf(undefined));
    // `lintel devices events list` is built with `devices`
    expect(verbsOf('devices', 'devices', 'events')).toEqual(verbsOf(undefined, 'devices', 'events'));
    expect(verbsOf('devices', 'devices', 'events')).toContain('list');
    // a singular family (no list) renamed by its handwritten tools: `lintel logs clear` is `log.clear`
    expect(verbsOf('logs', 'logs')).toContain('clear');
    // every command word of the program: focused on it, it has every verb it has unfocused
    const program = createProgram(ctx, { session: new RunSession(ctx), profile: null });
    for (const group of program.commands)
      for (const word of [group.name(), ...group.aliases()])
        expect(verbsOf(word, group.name()), word).toEqual(group.commands.map((c) => c.name()).sort());
  });
});
