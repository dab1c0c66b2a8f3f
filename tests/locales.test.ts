/**
 * Every namespace of the locales has every text in English and Russian, with the same parameters. Plural
 * forms count as one text: English has `_one`/`_other`, Russian `_one`/`_few`/`_many`/`_other`.
 */
import { describe, expect, it } from 'vitest';
import { namespaces, resources } from '@lintel/locales';

type Tree = { [key: string]: string | Tree };

function flatten(tree: Tree, prefix = ''): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [k, v] of Object.entries(tree)) {
    const key = prefix ? `${prefix}.${k}` : k;
    if (typeof v === 'string') {
      const base = key.replace(/_(zero|one|two|few|many|other)$/, '');
      out.set(base, [...(out.get(base) ?? []), v]);
    } else for (const [kk, vv] of flatten(v, key)) out.set(kk, [...(out.get(kk) ?? []), ...vv]);
  }
  return out;
}

const params = (texts: string[]) =>
  [...new Set(texts.flatMap((s) => [...s.matchAll(/{{\s*(\w+)\s*}}/g)].map((m) => m[1]!)))].sort();

describe.each(namespaces)('the %s locale', (ns) => {
  const en = flatten(resources.en[ns] as Tree);
  const ru = flatten(resources.ru[ns] as Tree);

  it('has every text in English and Russian, none empty', () => {
    expect([...ru.keys()].sort()).toEqual([...en.keys()].sort());
    for (const [k, texts] of [...en, ...ru]) for (const v of texts) expect(v.trim(), k).not.toBe('');
  });

  it('uses the same parameters in both languages', () => {
    for (const [k, texts] of en) expect(params(ru.get(k) ?? []), k).toEqual(params(texts));
  });

  it('gives Russian every plural form English has one for', () => {
    const plural = (tree: Tree, lang: 'en' | 'ru') =>
      [...flatten(tree)].filter(([, texts]) => texts.length > 1).map(([k]) => `${k}:${lang}`);
    for (const k of plural(resources.en[ns] as Tree, 'en')) {
      const base = k.replace(/:en$/, '');
      expect(ru.get(base)?.length ?? 0, base).toBeGreaterThanOrEqual(3);
    }
  });
});
