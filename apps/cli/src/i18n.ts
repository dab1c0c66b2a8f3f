import i18next from 'i18next';
import { resources } from '@lintel/locales';

const languages = ['en', 'ru'] as const;

/** LINTEL_LANG picks the language (en, ru); English is the default and the fallback. */
export const language = (languages as readonly string[]).includes(process.env.LINTEL_LANG ?? '')
  ? (process.env.LINTEL_LANG as (typeof languages)[number])
  : 'en';

const instance = i18next.createInstance();
void instance.init({
  resources: resources as unknown as Record<string, Record<string, Record<string, unknown>>>,
  lng: language,
  fallbackLng: 'en',
  // web: the words of codes the console and the CLI share (device event kinds, enum values)
  ns: ['cli', 'errors', 'commands', 'web'],
  defaultNS: 'cli',
  interpolation: { escapeValue: false },
  initAsync: false,
  showSupportNotice: false,
});

/** The CLI's own texts; keys are checked against locales/en/cli.json at compile time. */
export const t = instance.getFixedT(language, 'cli');

/** Keys built at run time (`errors:http.<key>`), so they go through an untyped lookup. */
export const tr = (key: string, params?: Record<string, unknown>): string =>
  (instance.t as unknown as (k: string, o?: Record<string, unknown>) => string)(key, params);

/** Whether the text exists, looked up with its parameters as `t` looks it up. */
export const hasText = (key: string, params?: Record<string, unknown>): boolean =>
  instance.exists(key, params);
