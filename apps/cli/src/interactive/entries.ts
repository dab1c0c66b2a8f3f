import type { Command as Commander } from 'commander';
import { getCommand } from '@lintel/commands';
import type { Profile } from '@lintel/core';
import { evaluateGates } from '../families/gates';
import { hasText, language, tr } from '../i18n';
import { offerOf, type Ask } from '../meta';

/** One command of the palette. */
export interface Entry {
  /** `users list`: the words after `lintel` */
  words: string[];
  /** the title in the CLI's language */
  title: string;
  /** the title in every language (the CLI's first), searched as well as the words */
  titles: string[];
  asks: Ask[];
  /** the optional arguments offered after the required ones */
  options: Ask[];
}

const LANGUAGES = ['en', 'ru'] as const;

const capital = (s: string) => s.charAt(0).toLocaleUpperCase() + s.slice(1);

function titlesOf(key: string, fallback: string): string[] {
  const langs = [language, ...LANGUAGES.filter((l) => l !== language)];
  return langs.map((lng) => capital(hasText(key) ? tr(key, { lng }) : fallback));
}

/**
 * Every command of the tree the palette offers, in the order of `lintel --help`, without those the signed-in
 * user may not run: the same rule as the web palette, which hides what the role or the licence does not
 * allow (the server refuses them anyway).
 */
export function paletteEntries(
  program: Commander,
  profile: Pick<Profile, 'role' | 'license_info'> | null,
): Entry[] {
  const out: Entry[] = [];
  const gated = new Set<Entry>();
  const walk = (cmd: Commander, words: string[]) => {
    for (const sub of cmd.commands) {
      const path = [...words, sub.name()];
      const offered = offerOf(sub);
      if (offered) {
        if (offered.gate && profile && !evaluateGates(getCommand(offered.gate), profile).can) continue;
        const titles = titlesOf(offered.titleKey, sub.description());
        const entry = {
          words: path,
          title: titles[0]!,
          titles,
          asks: offered.asks,
          options: offered.options ?? [],
        };
        out.push(entry);
        if (offered.gate) gated.add(entry);
      }
      walk(sub, path);
    }
  };
  walk(program, []);
  // the registry's commands first, then the CLI's own (who am I, contexts, sign out)
  const own = (e: Entry) => (gated.has(e) ? 0 : 1);
  return out
    .map((e, i) => ({ e, i }))
    .sort((a, b) => own(a.e) - own(b.e) || a.i - b.i)
    .map((x) => x.e);
}

/** What the search looks at: the titles, and the words as typed on the command line. */
export const searchTexts = (e: Entry): string[] => [...e.titles, e.words.join(' ')];
