import { useTranslation } from 'react-i18next';
import type { Filter } from '@lintel/core';
import { tableHref } from '../../resources/table-url';
import { Card, CardState, EventLine } from './card';
import { useEvents } from './use-reply';

const SIGN_IN: Filter = { field: 'action', rule: 'equals', value: 'login' };

/** Who signed in lately, each line into that person's sign-ins. */
export function SignInsCard() {
  const { t } = useTranslation();
  const events = useEvents([SIGN_IN], true);
  return (
    <Card
      title={t('home.sign_ins')}
      icon="user"
      href={tableHref('/audit-events', [SIGN_IN])}
      linkText={t('home.sign_ins_all')}
      testId="home-sign-ins"
    >
      {events === null || events === 'failed' || events.length === 0 ? (
        <CardState
          state={events === null ? 'loading' : events === 'failed' ? 'failed' : 'empty'}
          empty={t('home.sign_ins_none')}
        />
      ) : (
        <ul className="py-1">
          {events.map((e) => (
            <EventLine
              key={e.id}
              // this person's sign-ins (the event names the account)
              href={tableHref(
                '/audit-events',
                e.entity_id
                  ? [SIGN_IN, { field: 'entity_id', rule: 'equals', value: e.entity_id }]
                  : [SIGN_IN],
              )}
              title={t('home.sign_ins_of')}
              main={<span className="font-medium">{e.entity_name ?? e.user?.name ?? t('home.none')}</span>}
              mainText={e.entity_name ?? e.user?.name ?? t('home.none')}
              sub={e.ip ?? t('home.none')}
              at={e.created_at}
            />
          ))}
        </ul>
      )}
    </Card>
  );
}
