import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { resources } from '@lintel/locales';

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

const params = (s: string) => [...s.matchAll(/{{\s*(\w+)\s*}}/g)].map((m) => m[1]).sort();

describe('web locale', () => {
  const en = flatten(resources.en.web as Tree);
  const ru = flatten(resources.ru.web as Tree);

  it('has every key in English and Russian, none empty', () => {
    expect([...ru.keys()].sort()).toEqual([...en.keys()].sort());
    for (const [k, v] of [...en, ...ru]) expect(v.trim(), k).not.toBe('');
  });

  it('uses the same interpolation parameters in both languages', () => {
    for (const [k, v] of en) expect(params(ru.get(k) ?? ''), k).toEqual(params(v));
  });

  it('is actually translated', () => {
    // texts that are the same in both languages on purpose
    const same = new Set([
      'brand.name',
      'language.en',
      'language.ru',
      'layout.server_version',
      'home.project_uid',
      'home.none',
      // a language's name in that language
      'values.locale.en',
      'values.locale.ru',
      'delete.dependency',
      // protocol and technical names of devices' settings, read the same in every language
      'values.protocol.http',
      'values.protocol.mqtt',
      'values.transport.UDP',
      'values.transport.TCP',
      'values.transport.TLS',
      'values.recognition_mode.3D',
      'values.recognition_mode.2D',
      'values.relay_mode.COM-NC',
      'values.relay_mode.COM-NO',
      // identifier types named by their technology or product
      'values.type.ukey',
      'values.type.ukey2',
      'values.type.url',
      // an integration's type: the product it reaches (AxxonSoft's Axxon One)
      'values.type.axxon',
      // a product's name
      'general_settings.tabs.wallet',
    ]);
    for (const [k, v] of en)
      if (!same.has(k) && !/^[\s\-—@.:]*$/.test(v) && v !== 'E-mail') expect(ru.get(k), k).not.toBe(v);
  });

  it('has every key the console asks for by a literal', () => {
    const src = path.dirname(new URL(import.meta.url).pathname);
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        const full = path.join(dir, e.name);
        if (e.isDirectory()) walk(full);
        else if (/\.tsx?$/.test(e.name) && !e.name.endsWith('.test.ts')) files.push(full);
      }
    };
    walk(src);
    const missing: string[] = [];
    for (const file of files) {
      const text = fs.readFileSync(file, 'utf8');
      for (const m of text.matchAll(/\bt\('([a-z_]+(?:\.[a-z_]+)+)'/g))
        if (!en.has(m[1]!)) missing.push(`${path.basename(file)}: ${m[1]}`);
    }
    expect(missing).toEqual([]);
  });
});
