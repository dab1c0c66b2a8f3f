import type { ServerContext } from '../context';
import { clear, enforce, refund } from '../security/rate-limit';

export interface LoginAttempt {
  /** how long to hold the answer if this attempt fails (ms) */
  delayMs: number;
  /** the password was right: the account's failures are cleared, the address gets back this one attempt */
  succeeded(): Promise<void>;
}

/**
 * Counts a login attempt as a failure BEFORE the password is checked, per address and per account (an
 * unknown login counts under its name), and decides from the counts this attempt got: over either limit
 * it is refused (429 too_many_attempts, `{seconds}`) without checking anything, so parallel attempts
 * cannot all pass one check. After `slowAfter` failures a failed answer is held 250 ms more each time.
 * A success clears only its account's failures: the address keeps every failure it made.
 */
export async function beginLoginAttempt(
  app: ServerContext,
  ip: string,
  account: string,
): Promise<LoginAttempt> {
  const byAddress = await enforce(app, 'login_address', ip, { ip });
  const byAccount = await enforce(app, 'login_account', account, { ip });
  const { slowAfter, maxDelayMs } = app.config.login;
  const failures = Math.max(byAddress.count, byAccount.count);
  return {
    delayMs: failures <= slowAfter ? 0 : Math.min(maxDelayMs, 250 * (failures - slowAfter)),
    async succeeded() {
      await refund(app, byAddress);
      await clear(app, 'login_account', account);
    },
  };
}
