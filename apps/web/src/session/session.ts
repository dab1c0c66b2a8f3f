import { useSyncExternalStore } from 'react';
import { atom } from 'jotai';
import type { LoginReply, Profile, StoredSession } from '@lintel/core';
import type { ProfileBrand } from '@lintel/commands';
import { runCommand, sessionStore } from '../api/client';
import { appStore } from '../store';
import type { RememberType, StoredProjects } from './browser-session-store';

export { isSignedOutOnly, loginPath, safeRedirect } from './paths';

/** The signed-in user's profile, loaded by the signed-in layout. */
export const profileAtom = atom<Profile | null>(null);

/**
 * The brand the header shows for this user (his groups' or the project's white-label, `profile.whitelabel`);
 * null: the product's own. Loaded with the profile, and again when a white-label changes (`refreshBrand`).
 */
export const brandAtom = atom<ProfileBrand | null>(null);

/** Reads the user's brand again (after a white-label was changed on this console). */
export async function refreshBrand(): Promise<void> {
  if (!sessionStore.get()) return;
  const { data } = await runCommand('profile.whitelabel', {});
  appStore.set(brandAtom, data);
}

/**
 * Reads the profile again: what it allows (its role's permissions, its licence info) may have changed, e.g.
 * after a licence was added or deleted. The menu, the palette and the pages' gates follow the new one.
 */
export async function refreshProfile(): Promise<void> {
  if (!sessionStore.get()) return;
  const profile = await runCommand('profile.get', {});
  if (appStore.get(profileAtom)) appStore.set(profileAtom, profile);
}

/** Why the user landed on the login page, when it was not their own choice. */
export const signedOutReasonAtom = atom<'expired' | null>(null);

let signingOut = false;
let signedOutDeliberately = false;

/** True after the user signed out by choice: guards then send them to plain /login, without a redirect. */
export function wasSignedOutDeliberately(): boolean {
  return signedOutDeliberately;
}

/** The login page has been reached; from now on guards add ?redirect= again. */
export function acknowledgeSignOut(): void {
  signedOutDeliberately = false;
}

export function useSession(): StoredSession | null {
  return useSyncExternalStore(sessionStore.subscribe, () => sessionStore.get());
}

export function useProjects(): StoredProjects | null {
  return useSyncExternalStore(sessionStore.subscribe, () => sessionStore.getProjects());
}

/**
 * Spec part 1 §4 "Session": with one available project the user is signed in at once; with several the
 * project list is kept for /choose-project. Returns what happened.
 */
export function startSession(
  reply: LoginReply,
  login: string,
  remember: RememberType,
): 'signed-in' | 'choose' | 'none' {
  sessionStore.setRemember(remember);
  signedOutDeliberately = false;
  if (reply.sessions.length === 0) {
    sessionStore.clear();
    return 'none';
  }
  sessionStore.setProjects({ login, sessions: reply.sessions });
  if (reply.sessions.length === 1) {
    const only = reply.sessions[0]!;
    appStore.set(profileAtom, null);
    sessionStore.set({ token: only.token, refresh: only.refresh, project: only.project, login });
    return 'signed-in';
  }
  return 'choose';
}

/** Signs in with one project of the stored login reply. */
export function chooseProject(projectId: number): boolean {
  const projects = sessionStore.getProjects();
  const chosen = projects?.sessions.find((s) => s.project.id === projectId);
  if (!projects || !chosen) return false;
  signedOutDeliberately = false;
  appStore.set(profileAtom, null);
  sessionStore.set({
    token: chosen.token,
    refresh: chosen.refresh,
    project: chosen.project,
    login: projects.login,
  });
  return true;
}

/** True while the user's own sign-out runs, so a failing logout call is not taken for an expired session. */
export function isSigningOut(): boolean {
  return signingOut;
}

/** Logout clears the tokens and the project list (spec part 2 §4), whether or not the server answers. */
export async function signOut(): Promise<void> {
  signingOut = true;
  signedOutDeliberately = true;
  try {
    if (sessionStore.get()) await runCommand('session.logout', {});
  } catch {
    // the session ends here anyway
  } finally {
    sessionStore.clear();
    appStore.set(profileAtom, null);
    signingOut = false;
  }
}
