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
  /** the SIP node's ports: SIP over UDP and TCP, SIP over websocket (spec part 1 §2.4 "SIP nodes") */
  sip_port: z.number().int().nullable(),
  ws_port: z.number().int().nullable(),
  /** the address it advertises behind NAT (the SIP settings' public address), null when none */
  public_address: z.string().nullable(),
  /** what Kamailio says when asked (`core.uptime`, `ul.dump`, `dlg.stats_active`); null when it does not answer */
  uptime_s: z.number().int().nullable(),
  contacts: z.number().int().nullable(),
  dialogs: z.number().int().nullable(),
  /**
   * its registrations with the SIP trunks that have credentials (`uac`): registered, under way (first
   * attempt, renewal), or refused by the provider and tried again every 30 s
   */
  trunks: z.array(z.object({ id: z.number().int(), state: z.enum(['registered', 'registering', 'failed']) })),
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

/** An ICE server the web dialer's browsers use (RTCIceServer). */
export const IceServer = z.object({
  urls: z.union([z.string(), z.array(z.string())]),
  username: z.string().optional(),
  credential: z.string().optional(),
});

/**
 * The signed-in user's SIP profile for the web dialer (spec part 1 §3 "SIP profile: number, name, password";
 * part 2 §7 "SIP signalling"): the user's number and its name, the digest realm and the number's HA1 (Lintel
 * keeps the HA1 of `number:realm:password`, never the password; sip.js signs in with it), where the SIP
 * websocket listens (on the console's own host) and the ICE servers of the settings. `null` when the dialer
 * does not show: telephony off, or the user has no active number with a password.
 */
export const SipProfile = z.object({
  number: z.string(),
  name: z.string(),
  realm: z.string(),
  ha1: z.string(),
  ws_port: z.number().int(),
  ws_secure: z.boolean(),
  ice_servers: z.array(IceServer),
});
export type SipProfile = z.infer<typeof SipProfile>;

export const sipProfile = defineCommand({
  id: 'sip.profile',
  http: { method: 'GET', path: '/sip/profile' },
  args: NoArgs,
  result: SipProfile.nullable(),
  gates: { licence: ['sip.is_web_dialer_enabled'] },
  // credentials: the console fetches them for its dialer; nothing to run from the palette or the CLI
  hidden: true,
});
