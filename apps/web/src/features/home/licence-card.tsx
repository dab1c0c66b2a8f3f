import type { ReactNode } from 'react';
import { useAtomValue } from 'jotai';
import { useTranslation } from 'react-i18next';
import type { Licence, LicenceList } from '@lintel/core';
import { runCommand } from '../../api/client';
import { defaultDateStyle, formatDay } from '../../resources/format';
import { profileAtom } from '../../session/session';
import { Card, CardState } from './card';
import { useReply } from './use-reply';

type LicenceState = Licence['state'] | 'none';

/** The licence that decides: the one in force that ends last, else the reason none is in force. */
export function licenceSummary(list: LicenceList): {
  state: LicenceState;
  licence: Licence | null;
  daysLeft: number | null;
} {
  const inForce = list.in_force ? (list.items.find((l) => l.id === list.in_force!.id) ?? null) : null;
  if (inForce) return { state: inForce.state, licence: inForce, daysLeft: list.in_force!.days_left };
  for (const state of ['not_started', 'expired', 'disabled'] as const) {
    const l = list.items.find((x) => x.state === state);
    if (l) return { state, licence: l, daysLeft: l.days_left };
  }
  return { state: 'none', licence: null, daysLeft: null };
}

const STATE_STYLE: Record<LicenceState, string> = {
  active: 'bg-green-50 text-green-800 ring-green-200',
  ending: 'bg-amber-50 text-amber-900 ring-amber-200',
  not_started: 'bg-slate-100 text-slate-700 ring-slate-200',
  expired: 'bg-red-50 text-red-800 ring-red-200',
  disabled: 'bg-slate-100 text-slate-700 ring-slate-200',
  superseded: 'bg-slate-100 text-slate-700 ring-slate-200',
  none: 'bg-red-50 text-red-800 ring-red-200',
};

/** The licence's state, its days left and its end. */
export function LicenceCard() {
  const { t } = useTranslation();
  const profile = useAtomValue(profileAtom);
  const list = useReply(() => runCommand('licence.list', {}), 'licence.list');
  const style = {
    timeFormat: profile?.profile.time_format ?? defaultDateStyle.timeFormat,
    timeZone: profile?.profile.time_zone ?? defaultDateStyle.timeZone,
  };
  let body: ReactNode;
  if (list === null || list === 'failed')
    body = <CardState state={list === null ? 'loading' : 'failed'} empty="" />;
  else {
    const { state, licence, daysLeft } = licenceSummary(list);
    const inForce = state === 'active' || state === 'ending';
    body = (
      <div className="space-y-3 px-3 py-3 text-sm">
        <div className="flex items-center gap-2">
          <span
            className={`rounded-full px-2 py-0.5 text-xs font-semibold ring-1 ${STATE_STYLE[state]}`}
            data-testid="home-licence-state"
          >
            {t(`home.licence_state.${state}`)}
          </span>
          {list.evaluation && <span className="text-xs text-slate-600">{t('home.licence_evaluation')}</span>}
        </div>
        {inForce ? (
          <dl className="grid grid-cols-2 gap-3">
            <div>
              <dt className="text-xs text-slate-500">{t('home.licence_days_left')}</dt>
              <dd
                className={`text-2xl font-semibold tabular-nums ${state === 'ending' ? 'text-amber-800' : 'text-slate-900'}`}
                data-testid="home-licence-days"
              >
                {daysLeft === null ? '∞' : Math.max(daysLeft, 0)}
              </dd>
            </div>
            <div>
              <dt className="text-xs text-slate-500">{t('home.licence_valid_to')}</dt>
              <dd className="pt-1.5 text-slate-900 tabular-nums">
                {licence?.valid_to ? formatDay(licence.valid_to, style) : t('home.licence_no_end')}
              </dd>
            </div>
            {licence?.issuer && (
              <div className="col-span-2">
                <dt className="text-xs text-slate-500">{t('home.licence_issuer')}</dt>
                <dd className="truncate text-slate-900">{licence.issuer}</dd>
              </div>
            )}
          </dl>
        ) : (
          <p className="text-slate-700">{t('home.licence_off')}</p>
        )}
      </div>
    );
  }
  return (
    <Card
      title={t('home.licence')}
      icon="key"
      href="/licenses"
      linkText={t('home.licence_open')}
      testId="home-licence"
    >
      {body}
    </Card>
  );
}
