/**
 * `lintel completion bash|zsh|fish`: the bash script is sourced in a real bash and its function called as
 * bash calls it (COMP_WORDS, COMP_CWORD, COMP_LINE, COMP_POINT), against the built CLI on PATH. zsh and fish
 * are not installed here: their scripts are checked for what those shells need, and the helper they call is
 * checked directly.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bin, buildCli, freshConfigDir, lintel, removeConfigDirs } from './support';

let dir: string;
let binDir: string;
let configDir: string;
let script: string;

beforeAll(async () => {
  const built = buildCli();
  expect(built.status, built.stderr).toBe(0);
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-completion-'));
  // `lintel` on PATH, as an installed CLI is: the scripts call it by name
  binDir = path.join(dir, 'bin');
  fs.mkdirSync(binDir);
  fs.writeFileSync(path.join(binDir, 'lintel'), `#!/bin/sh\nexec '${process.execPath}' '${bin}' "$@"\n`, {
    mode: 0o755,
  });
  // two saved contexts, one with the ':' and '@' bash splits words at
  configDir = freshConfigDir();
  fs.mkdirSync(configDir, { recursive: true, mode: 0o700 });
  const project = { id: 1, uid: 'default', name: 'Default project', description: '' };
  fs.writeFileSync(
    path.join(configDir, 'config.json'),
    JSON.stringify({
      current: 'default@localhost:8080',
      contexts: {
        'default@localhost:8080': { server: 'http://localhost:8080', login: 'admin', project },
        staging: { server: 'http://staging:8080', login: 'ops', project },
      },
    }),
    { mode: 0o600 },
  );
  const r = await lintel(['completion', 'bash'], { configDir });
  expect(r.code, r.stderr).toBe(0);
  script = path.join(dir, 'lintel.bash');
  fs.writeFileSync(script, r.stdout);
});

afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
  removeConfigDirs();
});

/**
 * Calls `_lintel` as bash does for the command line `line` with the cursor at its end (bash's own word
 * split, at COMP_WORDBREAKS too), or for COMP_WORDS given as they are (no COMP_LINE). Returns COMPREPLY.
 */
function bashComplete(input: { line: string } | { words: string[] }): string[] {
  const setup =
    'line' in input
      ? [
          `COMP_LINE=${JSON.stringify(input.line)}`,
          'COMP_POINT=${#COMP_LINE}',
          // bash's split of the line: shell words, then the break characters = : @ on their own
          `read -r -a COMP_WORDS <<< "$(printf '%s' "$COMP_LINE" | sed -E 's/([=:@])/ \\1 /g')"`,
          '[[ $COMP_LINE == *" " ]] && COMP_WORDS+=("")',
          // a break character is a word, and so is the text either side of it
          'COMP_CWORD=$((${#COMP_WORDS[@]} - 1))',
        ]
      : [
          `COMP_WORDS=(${input.words.map((w) => `'${w}'`).join(' ')})`,
          'COMP_CWORD=$((${#COMP_WORDS[@]} - 1))',
          'unset COMP_LINE COMP_POINT',
        ];
  const program = [
    'set -u',
    `source ${JSON.stringify(script)}`,
    ...setup,
    'COMPREPLY=()',
    '_lintel',
    `printf '%s\\n' "\${COMPREPLY[@]}"`,
  ].join('\n');
  const r = spawnSync('bash', ['--norc', '--noprofile', '-c', program], {
    env: { ...process.env, PATH: `${binDir}:${process.env.PATH}`, LINTEL_CONFIG_DIR: configDir },
    encoding: 'utf8',
  });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout.split('\n').filter(Boolean);
}

describe('lintel completion', () => {
  it('bash: families, then verbs, then flags, read from the command tree', () => {
    const top = bashComplete({ words: ['lintel', ''] });
    expect(top).toEqual(expect.arrayContaining(['users', 'roles', 'groups', 'context', 'api', 'completion']));
    expect(top).not.toContain('__complete');
    expect(bashComplete({ words: ['lintel', 'us'] })).toEqual(['users']);

    const verbs = bashComplete({ words: ['lintel', 'users', ''] });
    expect(verbs).toEqual(expect.arrayContaining(['list', 'get', 'create', 'delete', 'import', 'export']));
    expect(bashComplete({ line: 'lintel users li' })).toEqual(['list']);

    const flags = bashComplete({ words: ['lintel', 'users', 'list', '--'] });
    expect(flags).toEqual(expect.arrayContaining(['--where', '--all', '--fields', '--sort', '--json']));
    expect(bashComplete({ line: 'lintel users list --wh' })).toEqual(['--where']);
  });

  it('bash: the values of enum flags, with a space or an = before them', () => {
    expect(bashComplete({ words: ['lintel', 'users', 'create', '--profile.time-format', ''] })).toEqual([
      'DD-MM-YYYY',
      'MM-DD-YYYY',
      'YYYY-MM-DD',
    ]);
    expect(bashComplete({ line: 'lintel users import people.csv --format ' })).toEqual([
      'csv',
      'xlsx',
      'json',
      'ndjson',
    ]);
    // bash splits `--format=x` at the '=' and replaces only what follows it
    expect(bashComplete({ line: 'lintel users export --format=x' })).toEqual(['xlsx']);
    expect(bashComplete({ words: ['lintel', 'users', 'export', '--refs', '=', ''] })).toEqual(['id', 'name']);
    expect(bashComplete({ line: 'lintel users list --fields id,na' })).toEqual(['id,name']);
  });

  it('bash: context names, even with the @ and : bash splits words at', () => {
    expect(bashComplete({ line: 'lintel context use ' })).toEqual(['default@localhost:8080', 'staging']);
    expect(bashComplete({ line: 'lintel context use st' })).toEqual(['staging']);
    // what bash replaces: the text from the last '@', or after the last ':'
    expect(bashComplete({ line: 'lintel context use default@lo' })).toEqual(['@localhost:8080']);
    expect(bashComplete({ line: 'lintel context use default@localhost:' })).toEqual(['8080']);
  });

  it('bash: file names where a file goes', () => {
    const data = path.join(dir, 'people-to-import.csv');
    fs.writeFileSync(data, 'login,name\n');
    expect(bashComplete({ line: `lintel users import ${path.join(dir, 'people-to')}` })).toEqual([data]);
    // no files where an id goes
    expect(bashComplete({ line: `lintel users get ${path.join(dir, 'people-to')}` })).toEqual([]);
  });

  it('zsh and fish: scripts that hand the words to the same helper and offer its answers', async () => {
    const zsh = await lintel(['completion', 'zsh'], { configDir });
    expect(zsh.code).toBe(0);
    expect(zsh.stdout.split('\n')[0]).toBe('#compdef lintel');
    expect(zsh.stdout).toContain('lintel __complete -- "${(@)words[2,CURRENT]}"');
    expect(zsh.stdout).toContain('_describe -t lintel lintel described');
    expect(zsh.stdout).toContain('_files');
    expect(zsh.stdout).toContain('compdef _lintel lintel');

    const fish = await lintel(['completion', 'fish'], { configDir });
    expect(fish.code).toBe(0);
    expect(fish.stdout).toContain('set -l words (commandline -opc)[2..-1] (commandline -ct)');
    expect(fish.stdout).toContain('lintel __complete -- $words');
    expect(fish.stdout).toContain('__fish_complete_path (commandline -ct)');
    expect(fish.stdout).toContain("complete -c lintel -f -a '(__lintel_complete)'");
    // every block the scripts open is closed (fish: function/if/for ... end)
    const opens = fish.stdout.match(/^\s*(function|if|for)\b/gm)?.length ?? 0;
    expect(fish.stdout.match(/^\s*end\b/gm)?.length).toBe(opens);

    for (const shell of ['zsh', 'fish'] as const) {
      const installed = spawnSync(shell, ['-n', '-c', 'true'], { encoding: 'utf8' });
      // where the shell is installed, it must at least read the script
      if (installed.error) continue;
      const file = path.join(dir, `lintel.${shell}`);
      fs.writeFileSync(file, shell === 'zsh' ? zsh.stdout : fish.stdout);
      expect(spawnSync(shell, ['-n', file], { encoding: 'utf8' }).status).toBe(0);
    }
  });

  it('the helper the scripts call: candidates with descriptions (zsh and fish show them), then the file directive', async () => {
    const verbs = await lintel(['__complete', '--', 'users', 'imp'], { configDir });
    expect(verbs.code).toBe(0);
    expect(verbs.stdout).toBe(
      'import\tImport users from a CSV, XLSX or JSON file: checked row by row, all or nothing\n:0\n',
    );
    const file = await lintel(['__complete', '--', 'users', 'import', ''], { configDir });
    expect(file.stdout).toBe(':1\n');
    const ru = await lintel(['__complete', '--', 'users', 'li'], { configDir, env: { LINTEL_LANG: 'ru' } });
    expect(ru.stdout).toBe('list\tСписок пользователей\n:0\n');
  });

  it('refuses a shell it does not know: exit 2', async () => {
    const r = await lintel(['completion', 'powershell'], { configDir });
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe('Unknown shell powershell. Use one of: bash, zsh, fish.');
  });
});
