import { z } from 'zod';
import { ReportPeriods } from './constants';

/**
 * The licence reports (spec part 2 §7 Reports, part 1 §2.1 /reports/licenses): their report periods (part 2
 * §9), the rows they return and the statuses of a licence period. The server computes a period's bounds by
 * its own clock (`reportWindow`); the console and the CLI only name the period.
 */
export const ReportPeriod = z.enum(ReportPeriods);
export type ReportPeriod = z.output<typeof ReportPeriod>;

const DAY = 86_400_000;
const dayStart = (ms: number) => Math.floor(ms / DAY) * DAY;
const monthStart = (y: number, m: number) => Date.UTC(y, m, 1);

/** A period's bounds: `[from, to)` in milliseconds (UTC days), null where open. */
export interface ReportWindow {
  from: number | null;
  to: number | null;
}

/**
 * The bounds of a report period at `now` (UTC): today — this day; current month — this month so far and to
 * its end; last month — the whole previous month; half year — the six months up to the end of today; last
 * year — the twelve months up to the end of today; manual — the days given (`to` is the last day, included);
 * all time — no bounds.
 */
export function reportWindow(
  period: ReportPeriod,
  now: number,
  manual: { from?: string | null; to?: string | null } = {},
): ReportWindow {
  const d = new Date(now);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  const endOfToday = dayStart(now) + DAY;
  switch (period) {
    case 'today':
      return { from: dayStart(now), to: endOfToday };
    case 'current_month':
      return { from: monthStart(y, m), to: monthStart(y, m + 1) };
    case 'last_month':
      return { from: monthStart(y, m - 1), to: monthStart(y, m) };
    case 'half_year':
      return { from: Date.UTC(y, m - 6, d.getUTCDate()) + DAY, to: endOfToday };
    case 'last_year':
      return { from: Date.UTC(y - 1, m, d.getUTCDate()) + DAY, to: endOfToday };
    case 'manual':
      return {
        from: manual.from ? Date.parse(`${manual.from}T00:00:00Z`) : null,
        to: manual.to ? Date.parse(`${manual.to}T00:00:00Z`) + DAY : null,
      };
    case 'all_time':
      return { from: null, to: null };
  }
}

/** A window as the days it covers (`to` the last day included), for replies and file names. */
export const windowAsDays = (w: ReportWindow) => ({
  from: w.from === null ? null : new Date(w.from).toISOString().slice(0, 10),
  to: w.to === null ? null : new Date(w.to - DAY).toISOString().slice(0, 10),
});

/** What the licences-used report counts per group (the counted things of the groups' maximums). */
export const ReportData = ['users', 'virtual_numbers', 'mobile_apps', 'ukey2_keys'] as const;
export type ReportDataKey = (typeof ReportData)[number];

/** How a licence period stands at the report's time. */
export const LicencePeriodStatuses = ['active', 'ending', 'expired', 'future', 'disabled'] as const;
export type LicencePeriodStatus = (typeof LicencePeriodStatuses)[number];

/** Which date of a licence period the date range bounds. */
export const ReportDateConditions = ['overlaps', 'starts', 'ends', 'notified'] as const;

const Day = z.string().nullable();

export const ReportPeriodInfo = z.object({ name: ReportPeriod, from: Day, to: Day, now: z.string() });

const Counts = z.record(z.string(), z.number().int().nullable());

/** One group of the licences-used report. */
export const LicencesUsedRow = z.object({
  group_id: z.number().int(),
  name: z.string(),
  parent_id: z.number().int().nullable(),
  type: z.string().nullable(),
  admins: z.array(z.string()),
  is_enabled: z.boolean(),
  /** the licence areas switched on by the group's licences in force at some time of the period */
  features: z.array(z.string()),
  /** the group's maximums (null: none of its own) */
  limits: Counts,
  /** what the group's subtree uses now */
  used: Counts,
});
export type LicencesUsedRow = z.output<typeof LicencesUsedRow>;

/** One licence of one group in the licence-validity report. */
export const LicencePeriodRow = z.object({
  group_id: z.number().int(),
  name: z.string(),
  type: z.string().nullable(),
  /** the licence's place in the group's list (from 1) */
  licence: z.number().int(),
  is_active: z.boolean(),
  features: z.array(z.string()),
  from: Day,
  to: Day,
  status: z.enum(LicencePeriodStatuses),
  /** whole days until the period ends (null: no end) */
  days_left: z.number().int().nullable(),
  notifications: z.object({ period: z.string(), notify_before: z.number().int() }),
  last_notified_at: z.string().nullable(),
});
export type LicencePeriodRow = z.output<typeof LicencePeriodRow>;

const Meta = z.object({ next: z.string().nullable(), limit: z.number().int() });

export const LicencesUsedReport = z.object({
  period: ReportPeriodInfo,
  data: z.array(LicencesUsedRow),
  meta: Meta,
});
export const LicencePeriodReport = z.object({
  period: ReportPeriodInfo,
  data: z.array(LicencePeriodRow),
  meta: Meta,
});
export type LicencesUsedReport = z.output<typeof LicencesUsedReport>;
export type LicencePeriodReport = z.output<typeof LicencePeriodReport>;

/** The export formats of the reports. */
export const ReportFormats = ['csv', 'xlsx'] as const;
