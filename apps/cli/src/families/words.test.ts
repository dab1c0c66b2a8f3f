import { describe, expect, it } from 'vitest';
import { defineCommand, NoArgs, registry, type Command } from '@lintel/commands';
import { z } from 'zod';
import { families, plural } from './words';
import { evaluateGates } from './gates';

describe('families', () => {
  it('are the plural kebab nouns that have a list, singular otherwise', () => {
    const words = families(registry).map((f) => f.word);
    expect(words.slice(0, 6)).toEqual(['users', 'roles', 'groups', 'devices', 'markers', 'domain-types']);
    // what devices push is no person's command
    expect(words.filter((w) => w.startsWith('device-gateway'))).toEqual([]);
    expect(words).toContain('audit-events');
    expect(words).toContain('profile');
    expect(words).not.toContain('session');
    expect(plural('entry')).toBe('entries');
    expect(plural('box')).toBe('boxes');
    expect(plural('key')).toBe('keys');
    expect(plural('access-matrix')).toBe('access-matrix');
  });

  it('pick up any new command without code of their own, and leave out public and hidden ones', () => {
    const extra = new Map<string, Command>(registry);
    const add = (c: Command) => extra.set(c.id, c);
    add(
      defineCommand({
        id: 'seed.demo',
        http: { method: 'POST', path: '/seed/demo' },
        args: NoArgs,
        result: z.object({}),
      }),
    );
    add(
      defineCommand({
        id: 'seed.scale',
        http: { method: 'POST', path: '/seed/scale' },
        args: z.object({ users: z.number() }),
        result: z.object({}),
      }),
    );
    add(
      defineCommand({
        id: 'thing.secret',
        http: { method: 'GET', path: '/x' },
        args: NoArgs,
        result: z.object({}),
        hidden: true,
      }),
    );
    const seed = families(extra).find((f) => f.noun === 'seed');
    expect(seed).toMatchObject({ word: 'seed', alias: undefined });
    expect(seed!.verbs.map((v) => v.word)).toEqual(['demo', 'scale']);
    expect(families(extra).find((f) => f.noun === 'thing')).toBeUndefined();
    const users = families(registry).find((f) => f.noun === 'user')!;
    expect(users.alias).toBe('user');
    expect(users.verbs.map((v) => v.word)).toEqual(
      expect.arrayContaining(['list', 'delete-all', 'send-registration-link']),
    );
  });
});

describe('gates', () => {
  const info = { mobile_app: { is_white_label_enabled: false } } as never;
  const profile = (permissions: string[], license_info = info) => ({
    role: { id: 1, name: 'r', permissions },
    license_info,
  });

  it('need one of the permissions, and every licence flag', () => {
    const create = registry.get('role.create')!;
    expect(evaluateGates(create, profile(['roles.create']))).toEqual({ can: true });
    expect(evaluateGates(create, profile(['users.view']))).toEqual({
      can: false,
      reason: 'permission',
      permissions: ['roles.create'],
    });
    const logo = registry.get('group.whitelabel_logo_delete')!;
    expect(evaluateGates(logo, profile(['domains.edit_all']))).toMatchObject({
      can: false,
      reason: 'licence',
    });
    expect(
      evaluateGates(
        logo,
        profile(['domains.edit_all'], {
          mobile_app: { is_enabled: true, is_white_label_enabled: true },
        } as never),
      ),
    ).toEqual({ can: true });
    // a flag inside a feature that is off is off (as the server and the web read it)
    expect(
      evaluateGates(
        logo,
        profile(['domains.edit_all'], { mobile_app: { is_white_label_enabled: true } } as never),
      ),
    ).toMatchObject({ can: false, reason: 'licence' });
    expect(evaluateGates(registry.get('profile.get')!, profile([]))).toEqual({ can: true });
  });
});
