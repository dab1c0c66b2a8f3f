import { describe, expect, it } from 'vitest';
import { registry } from '@lintel/commands';
import { resources } from '@lintel/locales';
import { isGenerated } from './words';

function keys(tree: unknown, prefix = ''): string[] {
  return Object.entries(tree as Record<string, unknown>).flatMap(([k, v]) =>
    v && typeof v === 'object' ? keys(v, `${prefix}${k}.`) : [`${prefix}${k}`],
  );
}

describe('CLI texts', () => {
  it('are complete in English and Russian, with the same parameters', () => {
    const en = keys(resources.en.cli).sort();
    expect(keys(resources.ru.cli).sort()).toEqual(en);
    const params = (s: string) => [...s.matchAll(/{{\s*([\w.]+)\s*}}/g)].map((m) => m[1]).sort();
    const at = (tree: unknown, key: string) =>
      key.split('.').reduce((o, k) => (o as Record<string, unknown>)[k], tree) as string;
    for (const key of en)
      expect(params(at(resources.ru.cli, key)), key).toEqual(params(at(resources.en.cli, key)));
  });

  it('give every command the CLI offers a title in both languages, and the field labels match', () => {
    for (const cmd of registry.values()) {
      if (!isGenerated(cmd)) continue;
      for (const lang of ['en', 'ru'] as const) {
        const commands = resources[lang].commands as Record<string, { label?: string }>;
        expect(commands[cmd.id]?.label, `${lang} ${cmd.id}`).toEqual(expect.any(String));
      }
    }
    const fields = (lang: 'en' | 'ru') =>
      keys((resources[lang].commands as { fields: unknown }).fields).sort();
    expect(fields('ru')).toEqual(fields('en'));
  });
});
