import { z } from 'zod';
import { defineCommand } from '../command';
import { OkReply } from '../resource';

/**
 * IP blocking (spec part 2 §7 "IP blocking: status GET and POST; banned list; unban all; unban per service
 * {ips}; whitelist get, add and delete per service {ips}", §9 "Block causes: unknown, auth failed, wrong
 * number"; part 1 §2.4 "IP blocking with whitelist", the IP range dialog `start_ip, end_ip`). Per service:
 * `console` (sign-in failures, the login throttle) and `sip` (the SIP server's authentication failures).
 * Installation-wide, like the addresses it guards. docs/decisions.md "Administration".
 */
export const IpServices = ['console', 'sip'] as const;
export const IpService = z.enum(IpServices);
export const BlockCauses = ['unknown', 'auth_failed', 'wrong_number'] as const;

const VIEW = { anyPermission: ['project_settings.view', 'project_settings.change'] } as const;
const CHANGE = { anyPermission: ['project_settings.change'] } as const;

const v4 = z.ipv4();
const v6 = z.ipv6();
/** 4 or 6 for an address of that family, else 0 (zod's own checks: the web has no `node:net`). */
export const ipFamily = (s: string): 0 | 4 | 6 =>
  v4.safeParse(s).success ? 4 : v6.safeParse(s).success ? 6 : 0;
const isIP = ipFamily;

/** One address (IPv4 or IPv6). */
export const AnyIpAddress = z
  .string()
  .trim()
  .max(64)
  .refine((s) => isIP(s) !== 0, { message: 'ip_address' });

/** An address, a prefix (`10.0.0.0/8`) or a range (`10.0.0.1-10.0.0.9`) of one family. */
export const IpPattern = z
  .string()
  .trim()
  .max(100)
  .refine(
    (s) => {
      const slash = s.indexOf('/');
      if (slash > 0) {
        const family = isIP(s.slice(0, slash));
        const bits = s.slice(slash + 1);
        return family !== 0 && /^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
      }
      const dash = s.indexOf('-');
      if (dash > 0) {
        const a = isIP(s.slice(0, dash).trim());
        return a !== 0 && a === isIP(s.slice(dash + 1).trim());
      }
      return isIP(s) !== 0;
    },
    { message: 'ip_prefix' },
  );

export const IpBlockingStatus = z.object({
  service: IpService,
  enabled: z.boolean(),
  /** failures from one address within `window_s` before it is banned */
  max_failures: z.number().int(),
  window_s: z.number().int(),
  ban_time_s: z.number().int(),
  /** addresses banned now */
  banned: z.number().int(),
  /** whitelist entries */
  whitelisted: z.number().int(),
});
export type IpBlockingStatus = z.infer<typeof IpBlockingStatus>;

export const IpBan = z.object({
  service: IpService,
  ip: z.string(),
  cause: z.enum(BlockCauses),
  failures: z.number().int(),
  banned_at: z.string(),
  banned_until: z.string(),
});
export type IpBan = z.infer<typeof IpBan>;

export const IpWhitelistEntry = z.object({
  id: z.number().int(),
  service: IpService,
  /** as written: an address, a prefix or a range */
  label: z.string(),
  start_ip: z.string(),
  end_ip: z.string(),
  description: z.string(),
  created_at: z.string(),
});
export type IpWhitelistEntry = z.infer<typeof IpWhitelistEntry>;

const ServiceFilter = z.object({ service: IpService.optional() });
const Ips = z.array(AnyIpAddress).min(1).max(1000);

export const ipBlockingStatus = defineCommand({
  id: 'ip_blocking.status',
  http: { method: 'GET', path: '/ip-blocking/status' },
  args: ServiceFilter,
  result: z.object({ data: z.array(IpBlockingStatus) }),
  gates: VIEW,
});

export const ipBlockingStatusSet = defineCommand({
  id: 'ip_blocking.status_set',
  http: { method: 'POST', path: '/ip-blocking/status' },
  args: z.object({
    service: IpService,
    enabled: z.boolean().optional(),
    max_failures: z.coerce.number().int().min(1).max(100_000).optional(),
    window_s: z.coerce.number().int().min(1).max(31_536_000).optional(),
    ban_time_s: z.coerce.number().int().min(1).max(31_536_000).optional(),
  }),
  result: z.object({ data: IpBlockingStatus }),
  gates: CHANGE,
});

export const ipBlockingBanned = defineCommand({
  id: 'ip_blocking.banned',
  http: { method: 'GET', path: '/ip-blocking/banned' },
  args: ServiceFilter,
  result: z.object({ data: z.array(IpBan) }),
  gates: VIEW,
});

export const ipBlockingUnbanAll = defineCommand({
  id: 'ip_blocking.unban_all',
  http: { method: 'POST', path: '/ip-blocking/unban-all' },
  args: ServiceFilter,
  result: z.object({ unbanned: z.number().int() }),
  gates: CHANGE,
});

export const ipBlockingUnban = defineCommand({
  id: 'ip_blocking.unban',
  http: { method: 'POST', path: '/ip-blocking/unban' },
  args: z.object({ service: IpService, ips: Ips }),
  result: z.object({ unbanned: z.number().int() }),
  gates: CHANGE,
});

export const ipBlockingWhitelist = defineCommand({
  id: 'ip_blocking.whitelist',
  http: { method: 'GET', path: '/ip-blocking/whitelist' },
  args: ServiceFilter,
  result: z.object({ data: z.array(IpWhitelistEntry) }),
  gates: VIEW,
});

/**
 * Adds addresses, prefixes or ranges (`ips`), or the range of the IP range dialog (`start_ip`, `end_ip`); an
 * address banned now and whitelisted is unbanned at once.
 */
export const ipBlockingWhitelistAdd = defineCommand({
  id: 'ip_blocking.whitelist_add',
  http: { method: 'PUT', path: '/ip-blocking/whitelist' },
  args: z
    .object({
      service: IpService,
      ips: z.array(IpPattern).max(1000).optional(),
      start_ip: AnyIpAddress.optional(),
      end_ip: AnyIpAddress.optional(),
      description: z.string().trim().max(500).optional(),
    })
    .refine((a) => (a.ips?.length ?? 0) > 0 || a.start_ip !== undefined, {
      message: 'one_of_required',
      path: ['ips'],
    }),
  result: z.object({ data: z.array(IpWhitelistEntry) }),
  gates: CHANGE,
});

/** Deletes entries by what they were written as (`ips`: their labels) or by id (`items`). */
export const ipBlockingWhitelistDelete = defineCommand({
  id: 'ip_blocking.whitelist_delete',
  http: { method: 'POST', path: '/ip-blocking/whitelist/delete' },
  args: z.object({
    service: IpService,
    ips: z.array(z.string().trim().max(100)).max(1000).optional(),
    items: z.array(z.coerce.number().int()).max(1000).optional(),
  }),
  result: OkReply,
  gates: CHANGE,
});
