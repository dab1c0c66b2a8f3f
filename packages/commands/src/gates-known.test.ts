import { describe, expect, it } from 'vitest';
import { isLicenceFlag, isPermissionCode } from '@lintel/core';
import { z } from 'zod';
import {
  familyCommandId,
  getCommand,
  IconNames,
  MenuSections,
  registry,
  resources,
  type CommandId,
  type Gates,
  type ResourceSpec,
} from './index';

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

  it("reject a declaration's field, icon or menu section that does not exist, at compile time (issue 19 item 3)", () => {
    const record = z.object({ id: z.number(), name: z.string(), profile: z.object({ phone: z.string() }) });
    type Trial = typeof record;
    const declare = (spec: Partial<ResourceSpec<'trial', Trial, Trial, Trial>>) => ({ record, ...spec });
    // a field of the record, and one of an object it holds, compile
    const good = declare({ fields: { name: { kind: 'text' }, phone: { kind: 'text' } } });
    // @ts-expect-error a field the record lacks does not compile
    const badField = declare({ fields: { nmae: { kind: 'text' } } });
    // @ts-expect-error an icon the console does not draw does not compile
    const badIcon = declare({ ui: { path: '/trial', icon: 'shiled', section: 'users' } });
    // @ts-expect-error a menu section that does not exist does not compile
    const badSection = declare({ ui: { path: '/trial', icon: 'shield', section: 'user' } });
    expect([good, badField, badIcon, badSection]).toHaveLength(4);
    // and the console draws every icon the vocabulary names, no more (icon.tsx: satisfies Record<IconName, …>)
    for (const r of resources) if (r.ui) expect(IconNames).toContain(r.ui.icon);
    for (const r of resources) if (r.ui) expect(MenuSections).toContain(r.ui.section);
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
