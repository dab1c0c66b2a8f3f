import { z } from 'zod';
import {
  LicencePeriodReport,
  LicencePeriodStatuses,
  LicencesUsedReport,
  ReportData,
  ReportDateConditions,
  ReportFormats,
  ReportPeriod,
  Timeouts,
} from '@lintel/core';
import { defineCommand } from '../command';

/**
 * The licence reports (spec part 2 §7 Reports: GET /reports/licenses/used and /reports/licenses/period,
 * timeout 5 min; part 1 §2.1 /reports/licenses, permission report-licences-used). Lists travel as
 * comma-separated text (`domains=3,5`), so the query, the CLI's flags and the console all write them alike.
 */
const gates = { anyPermission: ['reports.licenses_used'] } as const;

const csvOf = <T extends z.ZodType>(item: T) =>
  z
    .string()
    .max(100_000)
    .transform((s) => {
      // a command's own client sends the parsed list back as JSON (`[3,5]`): read that form too
      if (s.startsWith('[')) {
        try {
          const v: unknown = JSON.parse(s);
          if (Array.isArray(v)) return v.map(String);
        } catch {
          // not JSON: read as a plain list below
        }
      }
      return s
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean);
    })
    // the items' input is text (each split from the list); the cast says so to the type of `pipe`
    .pipe(z.array(item).max(10_000) as unknown as z.ZodType<z.output<T>[], string[]>);
const ids = csvOf(z.coerce.number().int().positive());
const Day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/);

const common = {
  /** groups (with everything below them) */
  domains: ids.optional(),
  domain_types: ids.optional(),
  /** users: groups they administer (group admins of part 2 §6) */
  domain_admins: ids.optional(),
  /** all: every filter given holds; any: one of them does */
  matching: z.enum(['all', 'any']).default('all'),
  period: ReportPeriod.default('all_time'),
  /** the days of a manual period (`date_to` included) */
  date_from: Day.optional(),
  date_to: Day.optional(),
  /** a page: at most this many rows after `cursor` */
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  cursor: z.string().max(200).optional(),
};

export const LicencesUsedArgs = z.object({
  ...common,
  /** the counted things reported (default all); with it, only groups that cap or use one of them */
  data: csvOf(z.enum(ReportData)).optional(),
});
export const LicencePeriodArgs = z.object({
  ...common,
  status: csvOf(z.enum(LicencePeriodStatuses)).optional(),
  /** which date of a licence the period bounds: its whole period (overlaps), its start, its end, or the last notice */
  date_condition: z.enum(ReportDateConditions).default('overlaps'),
});
const format = { format: z.enum(ReportFormats).default('csv') };

export const reportsLicencesUsed = defineCommand({
  id: 'reports.licences_used',
  http: { method: 'GET', path: '/reports/licenses/used' },
  args: LicencesUsedArgs,
  result: LicencesUsedReport,
  gates,
  timeoutMs: Timeouts.reports,
});

export const reportsLicencesPeriod = defineCommand({
  id: 'reports.licences_period',
  http: { method: 'GET', path: '/reports/licenses/period' },
  args: LicencePeriodArgs,
  result: LicencePeriodReport,
  gates,
  timeoutMs: Timeouts.reports,
});

/**
 * The same reports as a file (CSV or XLSX), every row of the filters, streamed as it is read. The reply is a
 * file, not JSON: the console and the CLI download it from `exportUrl`; hidden from the palette's list.
 */
export const reportsLicencesUsedExport = defineCommand({
  id: 'reports.licences_used_export',
  http: { method: 'GET', path: '/reports/licenses/used/export' },
  args: LicencesUsedArgs.omit({ limit: true, cursor: true }).extend(format),
  result: z.unknown(),
  gates,
  timeoutMs: Timeouts.reports,
  hidden: true,
});

export const reportsLicencesPeriodExport = defineCommand({
  id: 'reports.licences_period_export',
  http: { method: 'GET', path: '/reports/licenses/period/export' },
  args: LicencePeriodArgs.omit({ limit: true, cursor: true }).extend(format),
  result: z.unknown(),
  gates,
  timeoutMs: Timeouts.reports,
  hidden: true,
});
