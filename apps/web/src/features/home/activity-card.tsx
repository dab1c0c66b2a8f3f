import { useTranslation } from 'react-i18next';
import type { Filter } from '@lintel/core';
import { tableHref } from '../../resources/table-url';
import { auditWord } from '../audit-events/audit-events-page';
import { Card, CardState, EventLine } from './card';
import { useEvents } from './use-reply';

/** activity: what people did, without the sign-ins and sign-outs the other card and the log hold */
const ACTIVITY: Filter[] = [
  { field: 'action', rule: 'not_equals', value: 'login' },
  { field: 'action', rule: 'not_equals', value: 'logout' },
];

/** What people did lately, each line into that row's history (or the events of that kind). */
export function ActivityCard() {
  const { t } = useTranslation();
  const events = useEvents(ACTIVITY, true);
  return (
    <Card
      title={t('home.activity')}
      icon="list"
      href={tableHref('/audit-events', ACTIVITY)}
      linkText={t('home.activity_all')}
      testId="home-activity"
    >
      {events === null || events === 'failed' || events.length === 0 ? (
        <CardState
          state={events === null ? 'loading' : events === 'failed' ? 'failed' : 'empty'}
          empty={t('home.activity_none')}
        />
      ) : (
        <ul className="py-1">
          {events.map((e) => {
            // the row's history when the event names one, else every event of that kind
            const filters: Filter[] =
              e.entity && e.entity_id
                ? [
                    { field: 'entity', rule: 'equals', value: e.entity },
                    { field: 'entity_id', rule: 'equals', value: e.entity_id },
                  ]
                : [{ field: 'action', rule: 'equals', value: e.action }];
            return (
              <EventLine
                key={e.id}
                href={tableHref('/audit-events', filters)}
                title={t(e.entity && e.entity_id ? 'home.history_of' : 'home.events_like')}
                mainText={[
                  auditWord('audit.actions', e.action),
                  e.entity ? auditWord('audit.entities', e.entity) : '',
                  e.entity_name ?? '',
                ]
                  .filter(Boolean)
                  .join(' · ')}
                main={
                  <>
                    {auditWord('audit.actions', e.action)}
                    {e.entity && (
                      <span className="text-slate-500"> · {auditWord('audit.entities', e.entity)} </span>
                    )}
                    {e.entity_name && <span className="font-medium">{e.entity_name}</span>}
                  </>
                }
                sub={e.user?.name || t('home.system')}
                at={e.created_at}
              />
            );
          })}
        </ul>
      )}
    </Card>
  );
}
