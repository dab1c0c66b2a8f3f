import type { ServerContext } from '../context';
import { AppError } from '../errors';
import { banAddress, guardOf } from '../security/ip-blocking';
import { clear, hit, refund, refuse, type Hit } from '../security/rate-limit';

export interface LoginAttempt {
  /** how long to hold the answer if this attempt fails (ms) */
  delayMs: number;
  /** the password was right: the account's failures are cleared, the address gets back this one attempt */
  succeeded(): Promise<void>;
}

/**
 * Counts a login attempt as a failure BEFORE the password is checked, per address, per account (an unknown
 * login counts under its name) and per account and address, and decides from the counts this attempt got,
 * so parallel attempts cannot all pass one check:
 * - an address over its limit is refused (429 too_many_attempts, `{seconds}`) whatever account it tries;
 * - an account over its limit is refused only to the addresses that have already failed on it in the
 *   window: an attacker elsewhere cannot lock its owner out (issue 20, item 9), while each of his addresses
 *   gets one guess at it, slowed;
 * - after `slowAfter` failures (of the address or the account) a failed answer is held 250 ms more each time.
 * A success clears its account's failures; the address keeps every failure it made.
 *
 * The address side is IP blocking's service `console` (security/ip-blocking.ts): a banned address is refused
 * before anything is counted; a whitelisted one is never counted, slowed or banned; an address over the
 * service's `max_failures` is banned for its `ban_time_s` (cause `auth_failed`), on every instance.
 */
export async function beginLoginAttempt(
  app: ServerContext,
  ip: string,
  account: string,
): Promise<LoginAttempt> {
  const guard = await guardOf(app, 'console', ip);
  if (guard.bannedForS) throw new AppError('too_many_attempts', { seconds: guard.bannedForS });
  let byAddress: Hit | null = null;
  if (!guard.whitelisted) {
    byAddress = await hit(app, 'login_address', ip);
    const limit = guard.settings.enabled ? guard.settings.max_failures : byAddress.limit;
    if (byAddress.count > limit) {
      if (!guard.settings.enabled) await refuse(app, 'login_address', byAddress, ip);
      const seconds = await banAddress(app, 'console', ip, 'auth_failed', byAddress.count, guard.settings);
      throw new AppError('too_many_attempts', { seconds });
    }
  }
  const byAccount = await hit(app, 'login_account', account);
  const byPair = await hit(app, 'login_pair', `${account} ${ip}`);
  if (byAccount.over && byPair.count > 1) await refuse(app, 'login_account', byAccount, ip);
  const { slowAfter, maxDelayMs } = app.config.login;
  const failures = Math.max(byAddress?.count ?? 0, byAccount.count);
  return {
    delayMs: failures <= slowAfter ? 0 : Math.min(maxDelayMs, 250 * (failures - slowAfter)),
    async succeeded() {
      if (byAddress) await refund(app, byAddress);
      await clear(app, 'login_account', account);
      await clear(app, 'login_pair', `${account} ${ip}`);
    },
  };
}
