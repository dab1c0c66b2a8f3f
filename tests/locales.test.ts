/**
 * Every namespace of the locales has the same keys in English and Russian, none empty, with the same
 * parameters. No key is a plural form (`_one`, `_few`…): English and Russian have different sets of them,
 * so a count is written where any number reads ("At least {{count}} required").
 */
import { describe, expect, it } from 'vitest';
import { namespaces, resources } from '@lintel/locales';

type Tree = { [key: string]: string | Tree };

function flatten(tree: Tree, prefix = ''): Map<string, string> {
  const out = new Map<string, string>();
  for (const [k, v] of Object.entries(tree)) {
    const key = prefix ? `${prefix}.${k}` : k;
    if (typeof v === 'string') out.set(key, v);
    else for (const [kk, vv] of flatten(v, key)) out.set(kk, vv);
  }
  return out;
}

const params = (text: string) =>
  [...new Set([...text.matchAll(/{{\s*(\w+)\s*}}/g)].map((m) => m[1]!))].sort();

describe.each(namespaces)('the %s locale', (ns) => {
  const en = flatten(resources.en[ns] as Tree);
  const ru = flatten(resources.ru[ns] as Tree);

  it('has every text in English and Russian, none empty', () => {
    expect([...ru.keys()].sort()).toEqual([...en.keys()].sort());
    for (const [k, v] of [...en, ...ru]) expect(v.trim(), k).not.toBe('');
  });

  it('uses the same parameters in both languages', () => {
    for (const [k, v] of en) expect(params(ru.get(k) ?? ''), k).toEqual(params(v));
  });

  it('has no plural forms', () => {
    const plural = [...en.keys(), ...ru.keys()].filter((k) => /_(zero|one|two|few|many|other)$/.test(k));
    expect(plural).toEqual([]);
  });
});

describe('the palette', () => {
  it('names the family of every command in both languages (palette.family.<noun>, or its page title)', async () => {
    // a new family of commands showed its raw key in the palette (palette.family.sip, palette.family.backup)
    const { registry } = await import('@lintel/commands');
    const nouns = [
      ...new Set(
        [...registry.values()].filter((c) => c.access === 'session').map((c) => c.id.split('.')[0]!),
      ),
    ];
    const missing: string[] = [];
    for (const lang of ['en', 'ru'] as const) {
      const web = flatten(resources[lang].web as Tree);
      const commands = flatten(resources[lang].commands as Tree);
      for (const noun of nouns)
        if (!web.has(`palette.family.${noun}`) && !commands.has(`pages.${noun}.title`))
          missing.push(`${lang}: ${noun}`);
    }
    expect(missing).toEqual([]);
  });
});

describe('codes shown to people (issue 25 item 6)', () => {
  // the console showed raw codes: `accesscontroller`, `online`, `remote_lock_opened`, `import`, `device`
  const langs = ['en', 'ru'] as const;

  it('every enum value of a family has its words (web:values.<field>.<value>), as the forms ask', async () => {
    const { resources: families, auditEventFields } = await import('@lintel/commands');
    // (the device events' kinds and results have their own words, device_events.kinds and .results)
    const fieldSets = [...families.map((r) => r.fields), auditEventFields];
    const missing: string[] = [];
    for (const lang of langs) {
      const web = flatten(resources[lang].web as Tree);
      for (const fields of fieldSets)
        for (const [name, f] of Object.entries(
          fields as Record<string, { kind: string; values?: readonly string[] }>,
        ))
          if (f.kind === 'enum')
            for (const v of f.values ?? [])
              if (!web.has(`values.${name}.${v}`)) missing.push(`${lang}: values.${name}.${v}`);
    }
    expect([...new Set(missing)]).toEqual([]);
  });

  it('every audit action and entity has its words (web:audit.actions.<action>, web:audit.entities.<entity>)', async () => {
    const { AuditActions, AuditEntities } = await import('@lintel/core');
    const { resources: families } = await import('@lintel/commands');
    const missing: string[] = [];
    for (const lang of langs) {
      const web = flatten(resources[lang].web as Tree);
      for (const a of AuditActions)
        if (!web.has(`audit.actions.${a}`)) missing.push(`${lang}: audit.actions.${a}`);
      for (const e of [...AuditEntities, ...families.map((r) => r.noun)])
        if (!web.has(`audit.entities.${e}`)) missing.push(`${lang}: audit.entities.${e}`);
    }
    expect(missing).toEqual([]);
  });
});
