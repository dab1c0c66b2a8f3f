import { useAtom } from 'jotai';
import { useTranslation } from 'react-i18next';
import { Locales, type LocaleCode } from '@lintel/core';
import { runCommand } from '../api/client';
import { describeError } from '../api/errors';
import { pushAlert } from '../alerts/alerts';
import { applyLocale, currentLocale } from '../i18n';
import { profileAtom, useSession } from '../session/session';
import { focusRing } from '../ui/button';

let chosenWhileSignedOut = false;

/**
 * After sign-in: a language picked on the signed-out pages is saved to the profile; otherwise the
 * profile's language is applied. Either way the latest explicit choice wins.
 */
export async function reconcileLocale(profileLocale: LocaleCode): Promise<LocaleCode | null> {
  const current = currentLocale();
  if (chosenWhileSignedOut) {
    chosenWhileSignedOut = false;
    return current !== profileLocale ? current : null;
  }
  if (profileLocale !== current) await applyLocale(profileLocale);
  return null;
}

/** The ru/en switch of the top bar (spec part 1 §2.3); signed in, the choice is kept in the profile. */
export function LanguageSwitcher() {
  const { t, i18n } = useTranslation();
  const session = useSession();
  const [profile, setProfile] = useAtom(profileAtom);
  const active = (i18n.resolvedLanguage ?? 'en') as LocaleCode;

  async function choose(locale: LocaleCode) {
    if (locale === active) return;
    await applyLocale(locale);
    if (!session || !profile) {
      chosenWhileSignedOut = !session;
      return;
    }
    try {
      setProfile(await runCommand('profile.update', { locale }));
    } catch (err) {
      pushAlert('error', `${t('language.save_failed')} ${describeError(err).message}`);
    }
  }

  return (
    <div
      role="group"
      aria-label={t('language.label')}
      className="inline-flex rounded-md border border-slate-300 bg-white p-0.5"
    >
      {Locales.map((locale) => (
        <button
          key={locale}
          type="button"
          lang={locale}
          aria-pressed={locale === active}
          // named by what it shows (EN, RU: axe's label-content-name-mismatch); the language's name is its title
          title={t(`language.${locale}`)}
          data-testid={`lang-${locale}`}
          onClick={() => void choose(locale)}
          className={`h-6 min-w-8 rounded px-1.5 text-xs font-semibold uppercase tracking-wide ${focusRing} ${
            locale === active ? 'bg-slate-800 text-white' : 'text-slate-600 hover:bg-slate-100'
          }`}
        >
          {locale}
        </button>
      ))}
    </div>
  );
}
