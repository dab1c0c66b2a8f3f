import { i18next } from '../i18n';

const tr = (key: string, lng?: string): string =>
  (i18next.t as unknown as (k: string, o?: Record<string, unknown>) => string)(
    key,
    lng ? { lng } : undefined,
  );

/** A command's title (`commands:<id>.label`) in the interface language, or in `lng`. */
export function commandTitle(id: string, lng?: string): string {
  const key = `commands:${id}.label`;
  return i18next.exists(key) ? tr(key, lng) : id;
}
