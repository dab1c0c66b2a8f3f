import { useCallback } from 'react';
import { useAtomValue } from 'jotai';
import type { Gates } from '@lintel/commands';
import type { Profile } from '@lintel/core';
import { profileAtom } from '../session/session';
import { evaluateGates, type Holder, type Verdict } from './gates';

export function holderOf(profile: Profile | null): Holder | null {
  return profile ? { permissions: profile.role.permissions, license: profile.license_info } : null;
}

/** `can(gates) → {can, reason}` for the signed-in user. */
export function useCan(): (gates: Gates | undefined) => Verdict {
  const profile = useAtomValue(profileAtom);
  return useCallback((gates: Gates | undefined) => evaluateGates(gates, holderOf(profile)), [profile]);
}

/** True when the role holds at least one of the permissions. */
export function useHasAny(): (codes: readonly string[]) => boolean {
  const profile = useAtomValue(profileAtom);
  return useCallback(
    (codes: readonly string[]) => !!profile && codes.some((c) => profile.role.permissions.includes(c)),
    [profile],
  );
}
