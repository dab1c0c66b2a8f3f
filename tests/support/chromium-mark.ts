/**
 * Whether the test file running in this fork launched Chromium: tests/support/cpu-per-file.ts looks for its
 * renderers in /proc only then. A module of its own, free of side effects: the CPU module registers hooks
 * and is a setup file, not something to import.
 */
interface BrowserMark {
  __lintelChromium?: boolean;
}

/** Called by whatever launches Chromium in a test file. */
export function chromiumStarted(): void {
  (globalThis as BrowserMark).__lintelChromium = true;
}

/** Whether this file launched Chromium since `forgetChromium`. */
export const chromiumWasStarted = (): boolean => (globalThis as BrowserMark).__lintelChromium === true;

/** At a file's start: a fork runs files one after another. */
export function forgetChromium(): void {
  (globalThis as BrowserMark).__lintelChromium = false;
}
