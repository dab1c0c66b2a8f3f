import type { Key } from 'ink';

const NO_KEY: Key = {
  upArrow: false,
  downArrow: false,
  leftArrow: false,
  rightArrow: false,
  pageDown: false,
  pageUp: false,
  home: false,
  end: false,
  return: false,
  escape: false,
  ctrl: false,
  shift: false,
  tab: false,
  backspace: false,
  delete: false,
  meta: false,
  super: false,
  hyper: false,
  capsLock: false,
  numLock: false,
};

/** One character of a chunk as ink would have read it alone: Enter, Tab, Backspace, Ctrl+letter, or text. */
function keyOf(c: string): [string, Key] {
  if (c === '\r' || c === '\n') return ['', { ...NO_KEY, return: true }];
  if (c === '\t') return ['', { ...NO_KEY, tab: true }];
  if (c === '\x7f' || c === '\b') return ['', { ...NO_KEY, backspace: true }];
  const code = c.codePointAt(0)!;
  // Ctrl+A .. Ctrl+Z: ink hands the letter with `ctrl`
  if (code >= 1 && code <= 26) return [String.fromCharCode(code + 96), { ...NO_KEY, ctrl: true }];
  return [c, NO_KEY];
}

/**
 * ink hands a run of plain characters that came in one write (a paste ending in Enter, two quick
 * backspaces) to the input handler at once, as one string that is no single key. This splits it back into
 * the keys it holds, each as ink reads a key alone; escape sequences (arrows) ink has split already.
 */
export function keysOf(input: string, key: Key): Array<[string, Key]> {
  const chars = [...input];
  if (chars.length <= 1 || input.startsWith('\x1b')) return [[input, key]];
  // plain text pasted goes in as it is, in one piece; only a chunk with keys in it is split
  // eslint-disable-next-line no-control-regex
  if (!/[\x00-\x1f\x7f]/.test(input)) return [[input, key]];
  return chars.map(keyOf);
}
