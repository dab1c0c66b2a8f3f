/**
 * The browser tests launch the Chromium `npm test` found: CHROMIUM_PATH when it names a binary that is there
 * (scripts/ensure.mjs accepts it in place of Debian's), else one of the usual places that is there.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { chromiumPath } from './chromium';

const before = process.env.CHROMIUM_PATH;
afterEach(() => {
  if (before === undefined) delete process.env.CHROMIUM_PATH;
  else process.env.CHROMIUM_PATH = before;
});

describe('chromiumPath', () => {
  it('is CHROMIUM_PATH when it names a binary that is there', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lintel-chrome-'));
    const binary = path.join(dir, 'chrome');
    fs.writeFileSync(binary, '');
    try {
      process.env.CHROMIUM_PATH = binary;
      expect(chromiumPath()).toBe(binary);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('falls through to a browser that is there when CHROMIUM_PATH names nothing', () => {
    // npm test has found one before any test runs (scripts/ensure.mjs, ensureChromium)
    process.env.CHROMIUM_PATH = path.join(os.tmpdir(), 'no-such-chrome');
    expect(chromiumPath()).not.toBe(process.env.CHROMIUM_PATH);
    expect(fs.existsSync(chromiumPath())).toBe(true);
  });
});
