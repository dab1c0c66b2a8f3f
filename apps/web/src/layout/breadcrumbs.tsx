import { useAtomValue } from 'jotai';
import { Link, useLocation, useSearchParams } from 'react-router';
import { useTranslation } from 'react-i18next';
import { pageById, pageOfPath, type PageDef } from '../nav/pages';
import { storedPage } from '../nav/return-to';
import { Icon } from '../ui/icon';
import { linkClass } from './auth-layout';
import { pageTitleAtom } from './page-title';

/**
 * Where an add or edit screen sits: list › this screen. An add or edit screen links back to the exact list
 * view it came from (its pageId), so filters and the scroll position's page are kept.
 */
export function Breadcrumbs() {
  const { t } = useTranslation();
  const location = useLocation();
  const [params] = useSearchParams();
  const title = useAtomValue(pageTitleAtom);
  const page = pageOfPath(location.pathname);
  // a top page's title is in the top bar and its place in the menu: nothing to add
  if (!page?.parent) return null;
  const tr = t as unknown as (k: string) => string;
  const chain: PageDef[] = [];
  for (
    let p: PageDef | undefined = page.parent ? pageById(page.parent) : undefined;
    p;
    p = p.parent ? pageById(p.parent) : undefined
  )
    chain.unshift(p);
  const back = storedPage(params.get('pageId'));
  return (
    <nav
      aria-label={t('layout.breadcrumbs')}
      className="mb-3 text-xs text-slate-500"
      data-testid="breadcrumbs"
    >
      <ol className="flex flex-wrap items-center gap-1">
        {chain.map((p, i) => (
          <li key={p.id} className="flex items-center gap-1">
            {i > 0 && <Icon name="chevron-right" className="size-3 text-slate-400" />}
            <Link to={i === chain.length - 1 && back ? back : p.path} className={linkClass}>
              {tr(p.titleKey)}
            </Link>
          </li>
        ))}
        <li className="flex min-w-0 items-center gap-1" aria-current="page">
          <Icon name="chevron-right" className="size-3 text-slate-400" />
          <span className="truncate text-slate-700">{title || tr(page.titleKey)}</span>
        </li>
      </ol>
    </nav>
  );
}
