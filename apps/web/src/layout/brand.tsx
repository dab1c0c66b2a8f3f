import { Link } from 'react-router';
import { useAtomValue } from 'jotai';
import { useTranslation } from 'react-i18next';
import { brandAtom } from '../session/session';
import { focusRing } from '../ui/button';

export function Logo({ className = 'size-6' }: { className?: string }) {
  return (
    <svg viewBox="0 0 16 16" aria-hidden="true" focusable="false" className={className}>
      <rect x="1" y="1" width="14" height="14" rx="3" fill="#1d4ed8" />
      <rect x="4" y="4" width="8" height="2" fill="white" />
      <rect x="5" y="6" width="2" height="6" fill="white" />
      <rect x="9" y="6" width="2" height="6" fill="white" />
    </svg>
  );
}

/**
 * Product mark and name, or the user's white-label (his groups' or the project's logo and name); links home.
 */
export function Brand({ dark = false }: { dark?: boolean }) {
  const { t } = useTranslation();
  const brand = useAtomValue(brandAtom);
  const name = brand?.name || t('brand.name');
  return (
    <Link
      to="/"
      className={`inline-flex min-w-0 items-center gap-2 rounded text-[15px] font-semibold tracking-tight ${focusRing} ${dark ? 'text-white' : 'text-slate-900'}`}
      aria-label={t('brand.home_link', { name })}
      data-testid="brand"
      data-source={brand?.source ?? 'product'}
    >
      {brand?.logo ? (
        <img
          src={brand.logo}
          alt=""
          className="size-6 shrink-0 rounded object-contain"
          data-testid="brand-logo"
        />
      ) : (
        <Logo />
      )}
      <span className="truncate">{name}</span>
    </Link>
  );
}
