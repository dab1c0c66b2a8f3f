import i18next from 'i18next';
import { initReactI18next } from 'react-i18next';
import { resources } from '@lintel/locales';
import { Defaults, Locales, type LocaleCode } from '@lintel/core';

const KEY_LOCALE = 'lintel.locale';

export function isLocale(v: unknown): v is LocaleCode {
  return typeof v === 'string' && (Locales as readonly string[]).includes(v);
}

/** The user locale is a stored browser setting (spec part 2 §9); English is the default and the fallback. */
export function storedLocale(): LocaleCode {
  try {
    const v = window.localStorage.getItem(KEY_LOCALE);
    if (isLocale(v)) return v;
  } catch {
    // storage blocked: use the default
  }
  return Defaults.locale;
}

export function currentLocale(): LocaleCode {
  return isLocale(i18next.resolvedLanguage) ? i18next.resolvedLanguage : Defaults.locale;
}

/** Switches the interface language and remembers it in this browser. */
export async function applyLocale(locale: LocaleCode): Promise<void> {
  try {
    window.localStorage.setItem(KEY_LOCALE, locale);
  } catch {
    // not remembered, still applied
  }
  if (i18next.resolvedLanguage !== locale) await i18next.changeLanguage(locale);
}

i18next.on('languageChanged', (lng) => {
  if (typeof document !== 'undefined') document.documentElement.lang = lng;
});

void i18next.use(initReactI18next).init({
  resources,
  lng: storedLocale(),
  fallbackLng: Defaults.locale,
  supportedLngs: [...Locales],
  ns: ['web', 'errors', 'commands'],
  defaultNS: 'web',
  interpolation: { escapeValue: false },
  initAsync: false,
  showSupportNotice: false,
});

export { i18next };
