import { describe, expect, it } from 'vitest';
import { isLicenceFlag, isPermissionCode } from '@lintel/core';
import { familyCommandId, getCommand, registry, resources, type CommandId, type Gates } from './index';

describe('the gates of the registry', () => {
  it('name only known permission codes and licence flags (the types say so; this holds any cast to it)', () => {
    const unknown: string[] = [];
    for (const cmd of registry.values()) {
      for (const p of cmd.gates.anyPermission ?? [])
        if (!isPermissionCode(p)) unknown.push(`${cmd.id}: ${p}`);
      for (const f of cmd.gates.licence ?? []) if (!isLicenceFlag(f)) unknown.push(`${cmd.id}: licence ${f}`);
    }
    expect(unknown).toEqual([]);
    expect(isPermissionCode('users.veiw')).toBe(false);
    expect(isLicenceFlag('amenity.is_enabled')).toBe(false);
  });

  it('reject a misspelled code or flag, and an unregistered id, at compile time', () => {
    // @ts-expect-error a misspelled permission code does not compile
    const badCode: Gates = { anyPermission: ['users.veiw'] };
    // @ts-expect-error a licence flag outside spec part 2 §6 does not compile
    const badFlag: Gates = { licence: ['amenities'] };
    // @ts-expect-error an id no module declares is no CommandId
    const badId: CommandId = 'user.lsit';
    expect([badCode, badFlag, badId]).toHaveLength(3);
    expect(() => getCommand(badId)).toThrow(/unknown command/);
  });

  it('find each family verb by noun, as registered', () => {
    for (const r of resources)
      for (const verb of ['list', 'get', 'create', 'update', 'delete', 'delete_all'] as const) {
        const id = familyCommandId(r.noun, verb);
        expect(id).toBe(`${r.noun}.${verb}`);
        expect(registry.get(id)).toBe(r.commands[verb]);
      }
    expect(() => familyCommandId('session', 'list')).toThrow(/no generic family/);
  });
});
