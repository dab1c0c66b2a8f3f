import 'i18next';
import type { resources } from '@lintel/locales';

/** Keys of `t()` are checked against the English catalogue at compile time. */
declare module 'i18next' {
  interface CustomTypeOptions {
    defaultNS: 'web';
    resources: (typeof resources)['en'];
  }
}
