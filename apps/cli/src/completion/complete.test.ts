import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { CliContext } from '../context';
import { createProgram } from '../program';
import { complete, completionText } from './complete';
import { completionScript } from './scripts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-complete-'));
fs.writeFileSync(
  path.join(dir, 'config.json'),
  JSON.stringify({
    current: 'default@localhost:8080',
    contexts: {
      'default@localhost:8080': {
        server: 'http://localhost:8080',
        login: 'admin',
        project: { id: 1, uid: 'default', name: 'Default', description: '' },
      },
      staging: {
        server: 'http://staging:8080',
        login: 'ops',
        project: { id: 1, uid: 'default', name: 'Default', description: '' },
      },
    },
  }),
);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const ctx = {
  env: { LINTEL_CONFIG_DIR: dir },
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
} as CliContext;
const program = createProgram(ctx);
const values = (...words: string[]) => complete(program, words).candidates.map((c) => c.value);

describe('completion from the commander tree', () => {
  it('offers the families and the CLI verbs, not the hidden helper', () => {
    const top = values('');
    expect(top).toEqual(
      expect.arrayContaining(['users', 'roles', 'login', 'context', 'api', 'completion', 'help']),
    );
    expect(top).not.toContain('__complete');
    expect(values('us')).toEqual(['users']);
  });

  it('offers the verbs of a family, by its word or its alias', () => {
    expect(values('users', '')).toEqual(
      expect.arrayContaining(['list', 'get', 'create', 'import', 'export']),
    );
    expect(values('user', 'li')).toEqual(['list']);
    expect(values('help', 'ro')).toEqual(['roles']);
  });

  it('offers flags after a dash, with their descriptions', () => {
    expect(values('users', 'list', '--')).toEqual(
      expect.arrayContaining(['--where', '--all', '--fields', '--json', '--help']),
    );
    const where = complete(program, ['users', 'list', '--wh']).candidates;
    expect(where).toHaveLength(1);
    expect(where[0]!.description).toContain('filter');
  });

  it('offers the values of enum flags, true/false, lists, and the --flag= form', () => {
    expect(values('users', 'create', '--profile.identifier-format', '')).toEqual(['dec', 'hex']);
    expect(values('users', 'import', 'x.csv', '--format', 'x')).toEqual(['xlsx']);
    expect(values('users', 'export', '--format=c')).toEqual(['--format=csv']);
    expect(values('users', 'create', '--is-group-admin=')).toEqual([
      '--is-group-admin=true',
      '--is-group-admin=false',
    ]);
    expect(values('users', 'list', '--fields', 'id,lo')).toEqual(['id,login']);
    expect(values('users', 'list', '--sort', '-na')).toEqual(['-name']);
    // a flag's value is not taken for a verb
    expect(values('users', 'list', '--where', '')).toEqual([]);
  });

  it('offers context names, shells and methods for positional arguments, files for a file', () => {
    expect(values('context', 'use', '')).toEqual(['default@localhost:8080', 'staging']);
    expect(values('login', '--context', 'st')).toEqual(['staging']);
    expect(values('completion', '')).toEqual(['bash', 'zsh', 'fish']);
    expect(values('api', 'P')).toEqual(['POST', 'PUT', 'PATCH']);
    expect(values('api', 'GET', '/users/:id/pa')).toEqual(['/users/:id/password']);
    expect(complete(program, ['users', 'import', '']).files).toBe(true);
    expect(complete(program, ['users', 'export', '-o', '']).files).toBe(true);
    expect(complete(program, ['users', 'get', '']).files).toBe(false);
  });

  it('writes the protocol the scripts read: value<TAB>description lines, then the file directive', () => {
    expect(
      completionText({ candidates: [{ value: 'a', description: 'the a' }, { value: 'b' }], files: true }),
    ).toBe('a\tthe a\nb\n:1\n');
  });

  it('has a script for each shell that calls the helper', () => {
    for (const shell of ['bash', 'zsh', 'fish'] as const) {
      const script = completionScript(shell);
      expect(script).toContain('lintel __complete --');
      expect(script).not.toContain('\\${');
    }
  });
});
