import type { ServerContext } from '../context';
import { AppError } from '../errors';
import { authenticateDevice, deviceBySerial, type Principal } from '../pipeline/principal';
import type { LoginAttempt } from './throttle';

/**
 * Guesses at a device's secret (issue 20 item 8) — Basic auth on /device-gateway, an MQTT connect to the
 * embedded broker, the device credentials a remote-control session is opened with — are throttled like
 * people's logins (`beginLoginAttempt`, the same `LoginAttempt` and the same limits: `config.login`), per
 * address and per device: the attempt is counted BEFORE the secret is checked, refused (429
 * too_many_attempts, `{seconds}`) over either limit without checking anything, and a success gives its
 * counts back. The counters live in memory, not in the database: a device calls every few seconds and a
 * flood of guesses must not become a flood of writes (the database is what item 4 protects). Per instance:
 * with several instances an attacker gets each one's budget.
 */
export function beginDeviceAttempt(app: ServerContext, ip: string, serial: string): LoginAttempt {
  const t = throttleOf(app);
  const now = app.clock.now().getTime();
  const { blockAfter, accountBlockAfter, windowS, slowAfter, maxDelayMs } = app.config.login;
  const byAddress = t.hit(`a:${ip}`, now, windowS * 1000);
  const byDevice = t.hit(`d:${serial}`, now, windowS * 1000);
  if (byAddress.count > blockAfter || byDevice.count > accountBlockAfter) {
    const seconds = Math.max(
      byAddress.count > blockAfter ? byAddress.retryAfterS : 0,
      byDevice.count > accountBlockAfter ? byDevice.retryAfterS : 0,
    );
    throw new AppError('too_many_attempts', { seconds });
  }
  const failures = Math.max(byAddress.count, byDevice.count);
  return {
    delayMs: failures <= slowAfter ? 0 : Math.min(maxDelayMs, 250 * (failures - slowAfter)),
    succeeded() {
      t.refund(`a:${ip}`, byAddress.start);
      t.clear(`d:${serial}`);
      return Promise.resolve();
    },
  };
}

class Counters {
  private readonly counts = new Map<string, { start: number; end: number; count: number }>();

  hit(key: string, now: number, windowMs: number): { count: number; start: number; retryAfterS: number } {
    let c = this.counts.get(key);
    if (!c || c.end <= now) {
      if (this.counts.size > 50_000)
        for (const [k, v] of this.counts) if (v.end <= now) this.counts.delete(k);
      c = { start: now, end: now + windowMs, count: 0 };
      this.counts.set(key, c);
    }
    c.count++;
    return { count: c.count, start: c.start, retryAfterS: Math.max(1, Math.ceil((c.end - now) / 1000)) };
  }

  refund(key: string, start: number): void {
    const c = this.counts.get(key);
    if (c && c.start === start && c.count > 0) c.count--;
  }

  clear(key: string): void {
    this.counts.delete(key);
  }
}

const throttles = new WeakMap<ServerContext, Counters>();

function throttleOf(app: ServerContext): Counters {
  let t = throttles.get(app);
  if (!t) throttles.set(app, (t = new Counters()));
  return t;
}

/** The serial number a `Basic` header names (what a device signs in with over HTTP), or null. */
export function basicSerial(header: string | undefined): string | null {
  const m = /^Basic\s+([A-Za-z0-9+/=]{1,512})$/i.exec(header ?? '');
  if (!m) return null;
  const text = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = text.indexOf(':');
  return colon < 1 ? null : text.slice(0, colon).slice(0, 128);
}

/**
 * A device over HTTP by its `Basic` credentials, throttled: over the limits a 429 (thrown) before anything is
 * checked. `unknown`: no device has that serial number (no secret was guessed: its attempt is given back,
 * and the caller may be noted in the pool of unregistered devices).
 */
export async function authenticateDeviceThrottled(
  app: ServerContext,
  header: string | undefined,
  ip: string,
): Promise<{ principal: Principal; unknown: boolean }> {
  const serial = basicSerial(header);
  if (!serial) return { principal: { kind: 'anonymous' }, unknown: false };
  const attempt = beginDeviceAttempt(app, ip, serial);
  const device = await deviceBySerial(app, serial);
  if (!device) {
    await attempt.succeeded();
    return { principal: { kind: 'anonymous' }, unknown: true };
  }
  const principal = await authenticateDevice(app, header);
  if (principal.kind !== 'anonymous') await attempt.succeeded();
  else if (attempt.delayMs) await new Promise((r) => setTimeout(r, attempt.delayMs));
  return { principal, unknown: false };
}
