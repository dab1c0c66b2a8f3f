import { z } from 'zod';
import { defineCommand, NoArgs } from '../command';

/**
 * The SIP settings and the push server (spec part 2 §7 "Project settings: … SIP GET and PATCH; … push server
 * GET and PATCH"; part 1 §2.4 "system settings (SIP, network interfaces, SIP nodes, …, push server)"; issue 24
 * item 2, issue 22 items 1 and 10). The SIP settings are the installation's, like its one SIP server: what an
 * installer sets for it on top of the environment (LINTEL_SIP_*), applied to the running Kamailio without a
 * restart of Lintel. The push server is the project's (its mobile app). Secrets (a TURN server's credential,
 * the push provider's key) are never returned: the placeholder when stored, and sent back it keeps them.
 * docs/decisions.md "SIP settings and the push server".
 */
const VIEW = { anyPermission: ['project_settings.view', 'project_settings.change'] } as const;
const CHANGE = { anyPermission: ['project_settings.change'] } as const;

/** A host name, an IPv4 address or an IPv6 address (no port, no scheme). */
const HOST =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*|[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*)$/;
/** RFC 7064 / 7065: `stun:host[:port]`, `turn:host[:port][?transport=udp|tcp]`, and their secure forms */
const ICE_URL =
  /^(?:stuns?|turns?):(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::\d{1,5})?(?:\?transport=(?:udp|tcp))?$/;

/** One ICE server of the web dialer (RTCIceServer): TURN needs a username and a credential. */
export const IceServerSetting = z
  .object({
    urls: z.array(z.string().trim().max(255).regex(ICE_URL)).min(1).max(5),
    username: z.string().trim().max(255).default(''),
    /** the placeholder when one is stored; empty when none */
    credential: z.string().max(255).default('').meta({ secret: true }),
  })
  .superRefine((s, ctx) => {
    if (!s.urls.some((u) => u.startsWith('turn'))) return;
    if (!s.username) ctx.addIssue({ code: 'custom', path: ['username'], message: 'required' });
    if (!s.credential) ctx.addIssue({ code: 'custom', path: ['credential'], message: 'required' });
  });
export type IceServerSetting = z.infer<typeof IceServerSetting>;

/**
 * The SIP settings as shown: each value in force, the installation's (environment) where none was set.
 * `realm`: the SIP domain numbers register in and the digest realm of their passwords. `public_address` and
 * `public_port`: what Kamailio advertises in its headers when it sits behind NAT (empty: the address it listens
 * on). Timeouts in seconds: a call that rings unanswered (`ring_timeout_s`), Kamailio's wait for Lintel's
 * route (`route_timeout_s`), an intercepted panel call's ring and its hold as a waiting call.
 */
export const SipSettings = z.object({
  realm: z.string(),
  public_address: z.string(),
  public_port: z.number().int().nullable(),
  ice_servers: z.array(IceServerSetting),
  ring_timeout_s: z.number().int(),
  route_timeout_s: z.number().int(),
  intercept_ring_s: z.number().int(),
  waiting_hold_s: z.number().int(),
});
export type SipSettings = z.infer<typeof SipSettings>;

const SipSettingsReply = z.object({
  data: SipSettings,
  /** the installation's values (environment), which a setting replaced or null restores */
  defaults: SipSettings,
  /** which fields are set here rather than taken from the environment */
  overridden: z.array(z.string()),
  /** local: Lintel renders and runs Kamailio; remote: KAMAILIO_RPC_URL's (only the realm reaches it); off */
  mode: z.enum(['local', 'remote', 'off']),
  /** active numbers whose password was set for another realm: they register again once it is set anew */
  numbers_other_realm: z.number().int(),
  /** what the change did to the SIP server (null on a read) */
  applied: z.enum(['restarted', 'reinitialised', 'unchanged', 'not_running', 'failed']).nullable(),
});

export const settingsSipGet = defineCommand({
  id: 'settings.sip_get',
  http: { method: 'GET', path: '/settings/sip' },
  args: NoArgs,
  result: SipSettingsReply,
  gates: VIEW,
});

const seconds = (min: number, max: number) => z.coerce.number().int().min(min).max(max).nullable().optional();

/**
 * Changes the SIP settings; a field left out keeps its value, `null` gives it back to the installation's. A
 * change of what Kamailio is configured with (realm, public address and port, timeouts) re-renders its
 * configuration and restarts it (the SIP reboot notifications), every instance its own; the ICE servers reach
 * the dialers on their next sign-in to SIP. The reply is the settings after it.
 */
export const settingsSipUpdate = defineCommand({
  id: 'settings.sip_update',
  http: { method: 'PATCH', path: '/settings/sip' },
  args: z
    .object({
      realm: z
        .string()
        .trim()
        .min(1)
        .max(128)
        .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/)
        .nullable()
        .optional(),
      public_address: z.string().trim().max(255).regex(HOST).or(z.literal('')).nullable().optional(),
      public_port: z.coerce.number().int().min(1).max(65535).nullable().optional(),
      ice_servers: z.array(IceServerSetting).max(10).nullable().optional(),
      ring_timeout_s: seconds(5, 600),
      route_timeout_s: seconds(1, 10),
      intercept_ring_s: seconds(5, 300),
      waiting_hold_s: seconds(10, 3600),
    })
    .strict(),
  result: SipSettingsReply,
  gates: CHANGE,
  timeoutMs: 60_000,
});

/** The push providers: none, Firebase Cloud Messaging (HTTP v1), Apple Push Notification service, or a relay. */
export const PushProviders = ['none', 'fcm', 'apns', 'gateway'] as const;

/**
 * The project's push server: where the mobile app's notifications (calls, door events) are sent.
 * `fcm`: the Firebase project and its service account (JSON, secret). `apns`: the team, the key's id, the app's
 * bundle id and the `.p8` token key (PEM, secret), production or sandbox. `gateway`: an HTTPS relay at
 * `endpoint_url` with its API key (secret). `endpoint_url` with FCM or APNs replaces Google's or Apple's address.
 */
export const PushSettings = z.object({
  provider: z.enum(PushProviders),
  endpoint_url: z.string(),
  fcm_project_id: z.string(),
  fcm_service_account: z.string().meta({ secret: true }),
  apns_team_id: z.string(),
  apns_key_id: z.string(),
  apns_topic: z.string(),
  apns_key: z.string().meta({ secret: true }),
  apns_production: z.boolean(),
  api_key: z.string().meta({ secret: true }),
});
export type PushSettings = z.infer<typeof PushSettings>;

const PushReply = z.object({
  data: PushSettings,
  /** the provider has all it needs to send */
  ready: z.boolean(),
});

export const settingsPushGet = defineCommand({
  id: 'settings.push_get',
  http: { method: 'GET', path: '/settings/push' },
  args: NoArgs,
  result: PushReply,
  gates: VIEW,
});

/**
 * Saves the push server; the placeholder sent back as a secret keeps it, an empty string removes it. A
 * provider without what it needs, a service account that is no Google service account key, or a `.p8` that is
 * no EC private key, is `check_fields_data` naming the field.
 */
export const settingsPushUpdate = defineCommand({
  id: 'settings.push_update',
  http: { method: 'PATCH', path: '/settings/push' },
  args: z
    .object({
      provider: z.enum(PushProviders),
      endpoint_url: z
        .url({ protocol: /^https?$/ })
        .max(500)
        .or(z.literal('')),
      fcm_project_id: z
        .string()
        .trim()
        .max(128)
        .regex(/^[a-z0-9-]*$/),
      fcm_service_account: z.string().max(20_000).meta({ secret: true }),
      apns_team_id: z
        .string()
        .trim()
        .max(10)
        .regex(/^[A-Z0-9]*$/),
      apns_key_id: z
        .string()
        .trim()
        .max(10)
        .regex(/^[A-Z0-9]*$/),
      apns_topic: z
        .string()
        .trim()
        .max(255)
        .regex(/^[A-Za-z0-9.-]*$/),
      apns_key: z.string().max(10_000).meta({ secret: true }),
      apns_production: z.boolean(),
      api_key: z.string().max(1000).meta({ secret: true }),
    })
    .partial()
    .strict(),
  result: PushReply,
  gates: CHANGE,
});
