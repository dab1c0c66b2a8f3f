import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigStore, configDir, contextName } from './config-store';
import { CliError } from './errors';

const project = { id: 1, uid: 'default', name: 'Default project', description: '' };
const dirs: string[] = [];
function store(): ConfigStore {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-config-'));
  dirs.push(dir);
  return new ConfigStore({ LINTEL_CONFIG_DIR: path.join(dir, 'lintel') });
}
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

describe('config store', () => {
  it('finds the folder: LINTEL_CONFIG_DIR, then XDG_CONFIG_HOME, then ~/.config', () => {
    expect(configDir({ LINTEL_CONFIG_DIR: '/a', XDG_CONFIG_HOME: '/b' })).toBe('/a');
    expect(configDir({ XDG_CONFIG_HOME: '/b' })).toBe('/b/lintel');
    expect(configDir({})).toBe(path.join(os.homedir(), '.config', 'lintel'));
  });

  it('names a context by project and host:port', () => {
    expect(contextName('http://localhost:8080', 'default')).toBe('default@localhost:8080');
    expect(contextName('https://lintel.example.com/console', 'north')).toBe('north@lintel.example.com');
  });

  it('saves contexts 0600 in a 0700 folder, and keeps fields it does not know', () => {
    const config = store();
    expect(config.current()).toBeNull();
    config.save('default@h:1', { server: 'http://h:1', login: 'admin', project, token: 't', refresh: 'r' });
    expect(fs.statSync(config.file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(config.file)).mode & 0o777).toBe(0o700);
    fs.writeFileSync(config.file, JSON.stringify({ ...config.read(), future: { x: 1 } }));
    config.save('second@h:1', {
      server: 'http://h:1',
      login: 'admin',
      project: { ...project, uid: 'second' },
    });
    expect(config.read()).toMatchObject({ current: 'second@h:1', future: { x: 1 } });
    config.remove('second@h:1');
    expect(config.read().current).toBeNull();
    expect(Object.keys(config.read().contexts)).toEqual(['default@h:1']);
  });

  it('is a SessionStore over one context: set rotates the tokens, clear signs it out but keeps it', () => {
    const config = store();
    config.save('c', { server: 'http://h:1', login: 'admin', project, token: 't1', refresh: 'r1' });
    const session = config.sessionStore('c');
    expect(session.get()).toMatchObject({ token: 't1', refresh: 'r1', project, server: 'http://h:1' });
    session.set({ token: 't2', refresh: 'r2', project });
    expect(config.read().contexts.c).toMatchObject({ token: 't2', refresh: 'r2' });
    session.clear();
    expect(session.get()).toBeNull();
    expect(config.current()?.context).toEqual({ server: 'http://h:1', login: 'admin', project });
  });

  it('names the file it cannot read', () => {
    const config = store();
    fs.mkdirSync(path.dirname(config.file), { recursive: true });
    fs.writeFileSync(config.file, '{ not json');
    expect(() => config.read()).toThrow(CliError);
    try {
      config.read();
    } catch (err) {
      expect((err as CliError).data).toMatchObject({ file: config.file });
    }
  });
});
