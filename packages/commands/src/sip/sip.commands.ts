import { z } from 'zod';
import { defineCommand, NoArgs } from '../command';

/** One SIP server of the service (spec part 2 §7 "restart instance {type, ip_address}"). */
export const SipInstance = z.object({
  type: z.literal('kamailio'),
  ip_address: z.string(),
  state: z.enum(['up', 'down', 'starting']),
  version: z.string().nullable(),
  pid: z.number().int().nullable(),
  /** restarts after it died, since Lintel started */
  restarts: z.number().int(),
  started_at: z.string().nullable(),
});

/**
 * The SIP service's state (spec part 2 §7 "SIP service: status"): `down` with a reason (locale
 * `sip.reasons.<reason>`) when telephony is not configured (`disabled`), Kamailio is not installed
 * (`not_installed`), did not start (`start_failed`), died and is being restarted (`exited`), or a remote one
 * does not answer (`unreachable`). `numbers`: the numbers whose credentials the SIP server holds.
 */
export const SipStatus = z.object({
  state: z.enum(['up', 'down', 'starting']),
  reason: z
    .enum(['disabled', 'not_installed', 'start_failed', 'exited', 'unreachable', 'stopped'])
    .nullable(),
  mode: z.enum(['local', 'remote', 'off']),
  instances: z.array(SipInstance),
  listen: z
    .object({
      sip_port: z.number().int(),
      ws_port: z.number().int(),
      ws_secure: z.boolean(),
      realm: z.string(),
    })
    .nullable(),
  numbers: z.number().int(),
  /** the last time telephony went down, and why (it may be up again since) */
  last_failure: z
    .object({
      reason: z.enum(['start_failed', 'exited', 'unreachable', 'disabled', 'not_installed', 'stopped']),
      at: z.string(),
    })
    .nullable(),
});
export type SipStatus = z.infer<typeof SipStatus>;

export const sipStatus = defineCommand({
  id: 'sip.status',
  http: { method: 'GET', path: '/sip/status' },
  args: NoArgs,
  result: SipStatus,
  gates: { anyPermission: ['project_settings.view', 'project_settings.change'] },
});

/** Loads every number's credentials into the SIP server again (spec: "SIP instances re-initialised"). */
export const sipReinit = defineCommand({
  id: 'sip.reinit',
  http: { method: 'POST', path: '/sip/reinit' },
  args: NoArgs,
  result: SipStatus,
  gates: { anyPermission: ['project_settings.change'] },
});

/** Restarts one SIP server (spec: "restart instance {type, ip_address}"); the reply is the status after it. */
export const sipRestart = defineCommand({
  id: 'sip.restart',
  http: { method: 'POST', path: '/sip/restart' },
  args: z
    .object({ type: z.literal('kamailio').default('kamailio'), ip_address: z.string().max(255).optional() })
    .strict(),
  result: SipStatus,
  gates: { anyPermission: ['project_settings.change'] },
});
