import i18next from 'i18next';
import { resources } from '@lintel/locales';

const instance = i18next.createInstance();
void instance.init({
  resources: resources as unknown as Record<string, Record<string, Record<string, unknown>>>,
  fallbackLng: 'en',
  ns: ['mail', 'errors', 'commands'],
  defaultNS: 'mail',
  interpolation: { escapeValue: false },
  initAsync: false,
  showSupportNotice: false,
});

/** Server-side texts (e-mails) in the recipient's language. */
export type Translate = (key: string, params?: Record<string, unknown>) => string;

export function serverT(locale: string | null | undefined): Translate {
  return instance.getFixedT(locale === 'ru' ? 'ru' : 'en') as unknown as Translate;
}
