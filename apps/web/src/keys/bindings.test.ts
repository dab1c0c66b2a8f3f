import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { KEY_BINDINGS, clashes, type KeyBinding } from './bindings';

const src = join(__dirname, '..');
const files = (dir: string): string[] =>
  readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? files(p) : /\.tsx?$/.test(f) && !/\.test\./.test(f) ? [p] : [];
  });

describe('key bindings (keys/bindings.ts)', () => {
  it('binds no key twice where both are in force', () => {
    expect(clashes()).toEqual([]);
  });

  it('catches a duplicate in one scope, across a scope and the one it sits in, and a sequence under a key', () => {
    const t = (keys: string, labelKey: string, scope: KeyBinding['scope']): KeyBinding => ({
      keys,
      labelKey,
      scope,
    });
    expect(clashes([t('x', 'a', 'table'), t('j, x', 'b', 'table')])).toHaveLength(1);
    expect(clashes([t('g>g', 'first', 'table'), t('g>g', 'go', 'global')])).toHaveLength(1);
    expect(clashes([t('g', 'a', 'page'), t('g>u', 'b', 'global')])).toHaveLength(1);
    // a table and a tree are never on screen together
    expect(clashes([t('a', 'a', 'table'), t('a', 'b', 'tree')])).toEqual([]);
  });

  it('names every binding once', () => {
    const labels = KEY_BINDINGS.map((b) => b.labelKey);
    expect(labels.length).toBe(new Set(labels).size);
  });

  it('declares every key the code binds, with the same keys', () => {
    const declared = new Map(KEY_BINDINGS.map((b) => [b.labelKey, b.keys]));
    const found: string[] = [];
    for (const f of files(src)) {
      const text = readFileSync(f, 'utf8');
      for (const m of text.matchAll(/useShortcut\(\s*'([^']+)'[\s\S]*?labelKey: '([^']+)'/g)) {
        found.push(m[2]!);
        expect(declared.get(m[2]!), `${f}: ${m[2]}`).toBe(m[1]);
      }
    }
    // the calls above, and the go keys (`g>${page.goKey}`), are all in the table
    expect(found.length).toBeGreaterThan(15);
  });
});
