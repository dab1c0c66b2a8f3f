import { getCommand } from '@lintel/commands';
import { Profile } from '@lintel/core';
import { execute, signedIn, type SignedIn } from '../api';
import type { CliContext } from '../context';

/** How long help waits for the profile before listing every command unmarked. */
const HELP_PROFILE_TIMEOUT_MS = 3000;

/**
 * The session of one run of `lintel`: signed in once and the profile read once (for the gates), never
 * cached on disk, so a role changed on the server counts at the next command.
 */
export class RunSession {
  private signed: SignedIn | null = null;
  private profilePromise: Promise<Profile> | null = null;

  constructor(private readonly ctx: CliContext) {}

  /** The stored session or LINTEL_TOKEN; exit 3 when there is neither. */
  signedIn(): SignedIn {
    this.signed ??= signedIn(this.ctx);
    return this.signed;
  }

  profile(): Promise<Profile> {
    this.profilePromise ??= execute(this.signedIn().api, 'profile.get', {});
    return this.profilePromise;
  }

  /** For help: the profile when signed in and the server answers soon; null otherwise (help lists everything). */
  async profileForHelp(): Promise<Profile | null> {
    try {
      const { api } = this.signedIn();
      return await api.request('GET', getCommand('profile.get').http.path, {
        schema: Profile,
        timeoutMs: HELP_PROFILE_TIMEOUT_MS,
      });
    } catch {
      return null;
    }
  }
}
