import type { JournalStore } from '../engine/journal';
import { auditEventStore } from './audit-event/audit-event.handler';
import { deviceEventStore } from './device-event/device-event.handler';
import { callHistoryStore } from './call/call.handler';
import { acsEventStore } from './acs-event/acs-event.handler';

/** Every journal's store: each gets its retention job (jobs/journal-retention.ts). */
export const journals: readonly JournalStore<unknown>[] = [
  auditEventStore as JournalStore<unknown>,
  deviceEventStore as JournalStore<unknown>,
  callHistoryStore as JournalStore<unknown>,
  acsEventStore as JournalStore<unknown>,
];
