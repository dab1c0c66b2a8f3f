import { describe, expect, it } from 'vitest';
import { registry } from '@lintel/commands';
import { AllPermissions, LicenseInfo } from '@lintel/core';
import type { LicenseInfo as LicenseInfoType } from '@lintel/core';
import { byRisk } from '../palette/search';
import { runnableCommands } from './runnable';

describe("the palette's commands (issue 25 item 10)", () => {
  // every permission, every licence flag on: the palette of an administrator with everything licensed
  const license = Object.fromEntries(
    Object.entries(LicenseInfo.shape).map(([k, v]) => [
      k,
      Object.fromEntries(Object.keys(v.shape).map((f) => [f, f === 'license_count' ? null : true])),
    ]),
  ) as unknown as LicenseInfoType;
  const everything = runnableCommands({ permissions: AllPermissions, license });

  it("leaves out developers' tools, which the CLI keeps", () => {
    const developer = [...registry.values()].filter((c) => c.developer).map((c) => c.id);
    expect(developer).toEqual(expect.arrayContaining(['resources.meta', 'seed.scale']));
    const offered = new Set(everything.map((c) => c.id));
    for (const id of developer) expect(offered.has(id), id).toBe(false);
  });

  it('lists deletions after every other command', () => {
    const ordered = byRisk(everything).map((c) => c.id);
    const firstDeletion = ordered.findIndex((id) => /\.delete/.test(id));
    expect(firstDeletion).toBeGreaterThan(0);
    expect(ordered.slice(0, firstDeletion).some((id) => /\.delete/.test(id))).toBe(false);
    expect(ordered.indexOf('profile.delete')).toBeGreaterThanOrEqual(firstDeletion);
  });
});
