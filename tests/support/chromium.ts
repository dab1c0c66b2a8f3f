/**
 * Chromium for the browser tests: which binary, and whether the test file running in this fork launched it
 * (tests/support/cpu-per-file.ts looks for its renderers in /proc only then). Free of side effects: the CPU
 * module registers hooks and is a setup file, not something to import.
 */
import { chromiumCandidates, findChromium } from '../../scripts/ensure.mjs';

/** The browser `npm test` found (scripts/ensure.mjs): CHROMIUM_PATH, else Debian's Chromium, else another. */
export function chromiumPath(): string {
  return findChromium() ?? chromiumCandidates()[0]!;
}

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
