// The part of scripts/ensure.mjs that TypeScript reads (the tests' Chromium: tests/support/chromium.ts).
/** Where `npm test` looks for a browser, in order: CHROMIUM_PATH, then the usual places. */
export function chromiumCandidates(): string[];
/** The first candidate that is there. */
export function findChromium(): string | undefined;
