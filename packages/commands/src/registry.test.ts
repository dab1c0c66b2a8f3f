import { describe, expect, it } from 'vitest';
import { registry, getCommand, refFamilyOf, resources, toRequest, type CommandId } from './index';

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

describe('refFamilyOf: the arguments that hold ids of another family', () => {
  it("names the command's own family for a top-level id or items", () => {
    expect(refFamilyOf('user.get', 'id', true, false)).toBe('user');
    expect(refFamilyOf('user.delete_all', 'items', true, true)).toBe('user');
    expect(refFamilyOf('group.save_generated', 'id', true, false)).toBe('group');
    expect(refFamilyOf('domain_type.update', 'id', true, false)).toBe('domain_type');
    expect(refFamilyOf('access_area.update', 'id', true, false)).toBe('access_area');
  });

  it('knows every family with pages as a picker family, so its edit and delete pick a row by name', () => {
    // derived from the declaration: a family with `ui` is one, with nothing else to add
    const withPages = resources.filter((r) => r.ui).map((r) => r.noun);
    expect(withPages).toEqual(expect.arrayContaining(['user', 'access_area', 'webhook']));
    for (const noun of withPages) expect(refFamilyOf(`${noun}.update`, 'id', true, false), noun).toBe(noun);
  });
  it('names the family of a reference field by its name and shape', () => {
    expect(refFamilyOf('user.create', 'role', true, false)).toBe('role');
    expect(refFamilyOf('user.create', 'domains', true, true)).toBe('group');
    expect(refFamilyOf('group.create', 'parent_id', true, false)).toBe('group');
    expect(refFamilyOf('marker.apply', 'users', true, true)).toBe('user');
    expect(refFamilyOf('role.create', 'available_roles', true, true)).toBe('role');
  });
  it('is no reference where the shape differs, nested ids, or families without a list', () => {
    // `users` of seed.scale is a count, not a list of user ids
    expect(refFamilyOf('seed.scale', 'users', true, false)).toBeUndefined();
    expect(refFamilyOf('user.create', 'role', true, true)).toBeUndefined();
    expect(refFamilyOf('user.update', 'id', false, false)).toBeUndefined();
    expect(refFamilyOf('audit_event.get', 'id', true, false)).toBeUndefined();
  });
});

describe("a family's update", () => {
  it('changes only the fields it names: no default of the create is filled in', () => {
    for (const r of resources) {
      const update = getCommand(`${r.noun}.update` as CommandId);
      const parsed = update.args.safeParse({ id: 1 });
      // an update that needs more than its id (none today) says so; one that takes only the id adds nothing
      if (parsed.success)
        expect({ noun: r.noun, keys: Object.keys(parsed.data as object) }).toEqual({
          noun: r.noun,
          keys: ['id'],
        });
    }
  });
  it('a forward rule updated with its period alone keeps its numbers, queues and timeout', () => {
    const parsed = getCommand('forward_rule.update').args.parse({
      id: 3,
      period: { from: '09:00', to: '18:00' },
    });
    expect(parsed).toEqual({ id: 3, period: { from: 9 * 3600, to: 18 * 3600 } });
    // still strict: a field the update does not know is refused
    expect(getCommand('forward_rule.update').args.safeParse({ id: 3, bogus: 1 }).success).toBe(false);
  });
});
