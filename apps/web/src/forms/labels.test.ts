import { describe, expect, it } from 'vitest';
import { registry } from '@lintel/commands';
import { resources } from '@lintel/locales';
import { commandFields, nounOf } from './fields';
import type { FieldSpec } from './schema';

type Tree = { [key: string]: string | Tree };
const has = (tree: unknown, key: string): boolean => {
  let cur: unknown = tree;
  for (const part of key.split('.')) {
    if (!cur || typeof cur !== 'object' || !(part in cur)) return false;
    cur = (cur as Tree)[part];
  }
  return typeof cur === 'string' && cur.trim() !== '';
};

/** Every form the palette can open is labelled in both languages, and so are the values of its choices. */
describe('generated forms', () => {
  const visible = [...registry.values()].filter((c) => !c.hidden);
  for (const lang of ['en', 'ru'] as const) {
    it(`have a ${lang} label for every field and every choice`, () => {
      const missing: string[] = [];
      const walk = (commandId: string, fields: readonly FieldSpec[], parent?: string) => {
        for (const f of fields) {
          const key = `fields.${nounOf(commandId)}.${f.key}`;
          const nested = parent && `fields.${nounOf(commandId)}.${parent}_${f.key}`;
          if (!has(resources[lang].commands, key) && !(nested && has(resources[lang].commands, nested)))
            missing.push(`commands:${key}`);
          if (f.type === 'enum')
            for (const v of f.options ?? [])
              if (!has(resources[lang].web, `values.${f.key}.${v}`)) missing.push(`web:values.${f.key}.${v}`);
          if (f.fields) walk(commandId, f.fields, f.key);
        }
      };
      for (const c of visible) {
        const title = (resources[lang].commands as unknown as Record<string, { label?: string } | undefined>)[
          c.id
        ]?.label;
        if (!title?.trim()) missing.push(`commands:${c.id}.label`);
        walk(c.id, commandFields(c.id));
      }
      expect([...new Set(missing)]).toEqual([]);
    });
  }
});
