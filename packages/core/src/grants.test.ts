import { describe, expect, it } from 'vitest';
import {
  mayActOnUser,
  mayAssignGroups,
  mayChangeUserRole,
  mayEditAdministratorRole,
  mayGrantPermissions,
  mayGrantRole,
  mayListRoles,
  mayRemoveAdministrator,
  type CallerFacts,
} from './grants';

const caller = (permissions: string[], extra: Partial<CallerFacts> = {}): CallerFacts => ({
  userId: 1,
  permissions: new Set(permissions),
  availableRoles: [10, 11],
  subtree: [100, 101],
  ...extra,
});
const low = { id: 10, permissions: ['users.view'] };
const rich = { id: 11, permissions: ['users.view', 'devices.delete'] };
const admin = { id: 12, permissions: ['users.view', 'devices.delete', 'roles.grant_more_than_own'] };

describe('grant predicates', () => {
  it('a role is grantable when listed and holding nothing beyond the caller', () => {
    const c = caller(['users.view']);
    expect(mayGrantRole(c, low)).toEqual({ ok: true });
    expect(mayGrantRole(c, rich)).toEqual({
      ok: false,
      reason: 'grant_more_than_own',
      data: { reason: 'grant_more_than_own', permissions: ['devices.delete'] },
    });
    expect(mayGrantRole(c, admin)).toMatchObject({
      ok: false,
      reason: 'role_not_available',
      data: { role: 12 },
    });
    expect(mayGrantRole(caller(['roles.grant_more_than_own']), admin)).toEqual({ ok: true });
  });

  it('permissions, listed roles and groups', () => {
    expect(mayGrantPermissions(caller(['a']), ['a', 'b', 'c'])).toMatchObject({
      ok: false,
      data: { permissions: ['b', 'c'] },
    });
    expect(mayListRoles(caller([]), [10, 12, 13])).toMatchObject({
      ok: false,
      data: { reason: 'role_not_available', roles: [12, 13] },
    });
    expect(mayAssignGroups(caller([]), [100, 200, 200])).toMatchObject({
      ok: false,
      data: { reason: 'domain_out_of_scope', domains: [200] },
    });
    expect(mayAssignGroups(caller(['users.view_all']), [200])).toEqual({ ok: true });
  });

  it("authority over a user as he is: his role and his groups, naming him; oneself is always one's own", () => {
    const c = caller(['users.view']);
    expect(mayActOnUser(c, { id: 5, role: low, domains: [101] })).toEqual({ ok: true });
    expect(mayActOnUser(c, { id: 5, role: admin, domains: [101] })).toMatchObject({
      ok: false,
      data: { reason: 'role_not_available', role: 12, target: 5 },
    });
    expect(mayActOnUser(c, { id: 5, role: rich, domains: [101] })).toMatchObject({
      ok: false,
      data: { reason: 'grant_more_than_own', target: 5 },
    });
    expect(mayActOnUser(c, { id: 5, role: low, domains: [101, 300] })).toMatchObject({
      ok: false,
      data: { reason: 'domain_out_of_scope', domains: [300], target: 5 },
    });
    expect(mayActOnUser(c, { id: 1, role: admin, domains: [300] })).toEqual({ ok: true });
  });

  it('changing a role needs roles.edit_users, then a grantable role', () => {
    expect(mayChangeUserRole(caller(['users.view']), low)).toMatchObject({
      ok: false,
      data: { reason: 'edit_users' },
    });
    expect(mayChangeUserRole(caller(['users.view', 'roles.edit_users']), low)).toEqual({ ok: true });
    expect(mayChangeUserRole(caller(['users.view', 'roles.edit_users']), rich)).toMatchObject({
      ok: false,
      reason: 'grant_more_than_own',
    });
  });

  it('the Administrator role keeps what it holds, and its last holder stays', () => {
    expect(mayEditAdministratorRole(['a', 'b'], ['a', 'b', 'c'])).toEqual({ ok: true });
    expect(mayEditAdministratorRole(['a', 'b'], ['a'])).toMatchObject({
      ok: false,
      data: { reason: 'administrator_role', permissions: ['b'] },
    });
    expect(mayRemoveAdministrator(2, 1)).toEqual({ ok: true });
    expect(mayRemoveAdministrator(1, 1)).toMatchObject({ ok: false, reason: 'last_administrator' });
  });
});
