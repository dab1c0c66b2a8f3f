/**
 * The server's one source of time. Everything that decides by time (expiry, leases, back-off, run-at)
 * asks `clock.now()`, so a test moves a ManualClock instead of sleeping.
 */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock that stands still until a test sets or advances it. */
export class ManualClock implements Clock {
  private ms: number;

  constructor(start: Date | number = Date.now()) {
    this.ms = typeof start === 'number' ? start : start.getTime();
  }

  now(): Date {
    return new Date(this.ms);
  }

  set(to: Date | number): void {
    this.ms = typeof to === 'number' ? to : to.getTime();
  }

  advance(ms: number): void {
    this.ms += ms;
  }
}

/** `seconds` after the clock's now. */
export const after = (clock: Clock, seconds: number): Date =>
  new Date(clock.now().getTime() + seconds * 1000);
