import { describe, expect, it } from 'vitest';
import { registry, getCommand, toRequest, type CommandId } from './index';

describe('registry', () => {
  it('holds every command once, with a locale title key and a path under the API', () => {
    const ids = [...registry.keys()];
    expect(new Set(ids).size).toBe(ids.length);
    for (const cmd of registry.values()) {
      expect(cmd.titleKey).toBe(`commands.${cmd.id}.label`);
      expect(cmd.http.path.startsWith('/')).toBe(true);
    }
    const id: CommandId = 'session.login';
    expect(getCommand(id).access).toBe('public');
  });

  it('maps arguments to path, query and body as the server reads them', () => {
    const info = getCommand('registration.invite_info');
    expect(toRequest(info, { token: 'a b' })).toEqual({ path: '/registration/invite/a%20b', query: {} });
    const del = getCommand('profile.delete');
    expect(toRequest(del, { password: 'x' })).toEqual({ path: '/profile', body: { password: 'x' } });
  });
});
