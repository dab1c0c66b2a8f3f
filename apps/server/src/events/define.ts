import { z, type ZodType } from 'zod';
import { NotificationEventType, NotificationRecord, RealtimeTopics } from '@lintel/core';
import { deviceResource } from '@lintel/commands';
import type { AuthInfo } from '../context';

/**
 * Who may receive an event, checked for each subscriber as the event is sent (and replayed):
 * - `project`: everyone signed in to the event's project (`projectId` of the payload);
 * - `permission`: those of the event's project who hold the permission;
 * - `user`: the one user `userId` of the payload;
 * - `scope`: those of the event's project who hold one of `require` (when given) and whose scope of one of
 *   `reach`'s permissions takes in the group `domainId` of the payload: `all`, `descendants` (the caller's
 *   groups and those below them) or `domain` (the caller's own groups) — a family's view scope, as its
 *   list applies it (the devices' events, status and tasks).
 * A payload without the field its audience names reaches nobody.
 */
export type Audience =
  | { kind: 'project' }
  | { kind: 'permission'; permission: string }
  | { kind: 'user' }
  | {
      kind: 'scope';
      require?: readonly string[];
      reach: Readonly<Record<string, 'all' | 'descendants' | 'domain'>>;
    };

/**
 * The view scope of devices (part 2 §6), for the audiences of the devices' events: the declaration's, read
 * here rather than restated (devices are seen by their events as by their list).
 */
export const DeviceViewReach = deviceResource.scopes!.view! as Readonly<
  Record<string, 'all' | 'descendants' | 'domain'>
>;

/** An event declared once: where it goes, its name, the shape of its payload, and who may receive it. */
export interface EventDef<P extends ZodType = ZodType, T extends string = string> {
  /** the topic, or how the payload names it (`private-users.{userId}`) */
  topic: string | ((payload: z.output<P>) => string);
  type: T;
  payload: P;
  audience: Audience;
  /**
   * The event changes what these callers may do (their role): open connections read their caller again
   * and keep only the subscriptions it may still read.
   */
  affects?: (payload: Record<string, unknown>, auth: AuthInfo) => boolean;
}

export function defineEvent<const T extends string, P extends ZodType>(def: EventDef<P, T>): EventDef<P, T> {
  return def;
}

/** Whether `auth` may receive an event with this audience and payload (the one check, for live and replay). */
export function mayReceive(auth: AuthInfo, audience: unknown, data: Record<string, unknown>): boolean {
  const a = audience as Partial<Audience> | null;
  switch (a?.kind) {
    case 'project':
      return data.projectId === auth.projectId;
    case 'permission':
      return data.projectId === auth.projectId && !!a.permission && auth.permissions.has(a.permission);
    case 'user':
      return data.userId === auth.userId;
    case 'scope': {
      if (data.projectId !== auth.projectId || !a.reach) return false;
      if (a.require && !a.require.some((p) => auth.permissions.has(p))) return false;
      const group = typeof data.domainId === 'number' ? data.domainId : null;
      return Object.entries(a.reach).some(
        ([permission, scope]) =>
          auth.permissions.has(permission) &&
          (scope === 'all' ||
            (group !== null &&
              !!(scope === 'descendants' ? auth.groups?.subtree : auth.groups?.own)?.has(group))),
      );
    }
    default:
      return false;
  }
}

/** A role's permissions or assignable roles changed: its holders' consoles reload the profile (spec part 1 §4). */
export const RoleChangedEvent = defineEvent({
  topic: RealtimeTopics.appChanges,
  type: 'RoleChangedEvent',
  payload: z.object({ roleId: z.number().int(), projectId: z.number().int() }),
  audience: { kind: 'project' },
  affects: (p, auth) => auth.projectId === p.projectId && auth.roleId === p.roleId,
});

/** A user was given another role: that user's consoles reload the profile (ours: docs/decisions.md). */
export const ProfileChangedEvent = defineEvent({
  topic: (p) => RealtimeTopics.user(p.userId),
  type: 'ProfileChangedEvent',
  payload: z.object({ userId: z.number().int(), projectId: z.number().int() }),
  audience: { kind: 'user' },
  affects: (p, auth) => auth.userId === p.userId,
});

/** A text a client published on a topic that allows it (the user's own topic: the user's other consoles). */
export const ClientMessageEvent = defineEvent({
  topic: (p) => RealtimeTopics.user(p.userId),
  type: 'ClientMessage',
  payload: z.object({ userId: z.number().int(), projectId: z.number().int(), text: z.string() }),
  audience: { kind: 'user' },
});

/**
 * A device went online or offline (heartbeats, its status topic, or three missed heartbeats). For the consoles
 * that show devices: the websocket gives it to those whose device view scope reaches `domainId`.
 */
export const DeviceStatusChangedEvent = defineEvent({
  topic: RealtimeTopics.devices,
  type: 'DeviceStatusChangedEvent',
  payload: z.object({
    deviceId: z.number().int(),
    projectId: z.number().int(),
    domainId: z.number().int(),
    serialNumber: z.string(),
    status: z.enum(['online', 'offline']),
    /** why: a heartbeat, the device's status message, or missed heartbeats */
    cause: z.enum(['heartbeat', 'status', 'missed_heartbeats']),
    at: z.string(),
  }),
  audience: { kind: 'scope', reach: DeviceViewReach },
});

/**
 * A device task changed state (created, queued, sent, waiting for its device, completed, failed, stopped):
 * /devices/tasks and the device's tasks tab follow it live; the bell will tell of failures.
 */
export const DeviceTaskChangedEvent = defineEvent({
  topic: RealtimeTopics.devices,
  type: 'DeviceTaskChangedEvent',
  payload: z.object({
    taskId: z.number().int(),
    deviceId: z.number().int(),
    projectId: z.number().int(),
    domainId: z.number().int(),
    kind: z.enum(['settings', 'restart', 'reinit', 'init', 'entities']),
    state: z.enum(['new', 'queued', 'started', 'stopped', 'error', 'completed', 'waiting']),
    /** the catalogue code of the last failure */
    error: z.string().nullable(),
    attempts: z.number().int(),
    at: z.string(),
  }),
  audience: { kind: 'scope', reach: DeviceViewReach },
});

/**
 * A device pushed an event and it is stored (handlers/device-event): /devices/events and the home's latest
 * events read the journal again. Those with `devices.view_events` whose device scope takes in the device's
 * group receive it (their own groups with that permission alone, as the list).
 */
export const DeviceEventCreatedEvent = defineEvent({
  topic: RealtimeTopics.devices,
  type: 'DeviceEventCreatedEvent',
  payload: z.object({
    eventId: z.number().int(),
    deviceId: z.number().int(),
    projectId: z.number().int(),
    domainId: z.number().int().nullable(),
    kind: z.string(),
    result: z.string().nullable(),
    at: z.string(),
  }),
  audience: {
    kind: 'scope',
    require: ['devices.view_events'],
    reach: { ...DeviceViewReach, 'devices.view_events': 'domain' },
  },
});

/** A decision at a door was stored in the access-control log (access-sync/acs.ts). */
export const AcsEventCreatedEvent = defineEvent({
  topic: RealtimeTopics.accessControl,
  type: 'AcsEventCreatedEvent',
  payload: z.object({
    eventId: z.number().int(),
    deviceId: z.number().int(),
    projectId: z.number().int(),
    identifierId: z.number().int().nullable(),
    decision: z.enum(['granted', 'denied']),
    reason: z.string().nullable(),
    at: z.string(),
  }),
  audience: { kind: 'permission', permission: 'access_control_events.view' },
});

/**
 * A notification was stored for a user (notifications/notify.ts): that user's consoles show it in the bell
 * at once and read the unread list again.
 */
export const NotificationCreatedEvent = defineEvent({
  topic: (p) => RealtimeTopics.user(p.userId),
  type: NotificationEventType,
  payload: z.object({
    userId: z.number().int(),
    projectId: z.number().int(),
    notification: NotificationRecord,
  }),
  audience: { kind: 'user' },
});

/**
 * A network search the user started moved on (`progress`: probed of total), found a device (`found`, with the
 * device), or ended (`done`, or `interrupted` when its instance stopped): on that user's own topic, keyed by
 * the search's `requestId`. A console that missed some reads the search again (`device.search_result`).
 */
export const DeviceSearchEvent = defineEvent({
  topic: (p) => RealtimeTopics.user(p.userId),
  type: 'DeviceSearchEvent',
  payload: z.object({
    userId: z.number().int(),
    projectId: z.number().int(),
    requestId: z.string(),
    phase: z.enum(['progress', 'found', 'done', 'interrupted']),
    probed: z.number().int(),
    total: z.number().int(),
    timedOut: z.number().int(),
    found: z.number().int(),
    device: z.record(z.string(), z.unknown()).optional(),
  }),
  audience: { kind: 'user' },
});

/**
 * A virtual number's credentials changed (created, password or number changed, activated, deactivated,
 * deleted): every instance's SIP service (sip/service.ts) reads the number again and sets or deletes its
 * credentials in Kamailio, after the commit. Names numbers only, never a password or its hash.
 */
export const SipNumberChangedEvent = defineEvent({
  topic: 'private-sip-numbers',
  type: 'SipNumberChangedEvent',
  payload: z.object({ projectId: z.number().int(), numbers: z.array(z.string()) }),
  audience: { kind: 'permission', permission: 'sip_numbers.view_all' },
});

/**
 * A SIP trunk was created, changed or deleted: every instance's SIP service (sip/service.ts) reads the trunks'
 * addresses again into Kamailio's `trunkip` table (calls in from a provider are known by its address), after
 * the commit. Names the project only, never a trunk's credentials.
 */
export const SipTrunkChangedEvent = defineEvent({
  topic: 'private-sip-trunks',
  type: 'SipTrunkChangedEvent',
  payload: z.object({ projectId: z.number().int() }),
  audience: { kind: 'permission', permission: 'sip_trunks.view_all' },
});

/**
 * The SIP settings changed (settings.sip_update): every instance's SIP service (sip/service.ts) reads them
 * again, and renders its Kamailio's configuration anew and restarts it when what it was configured with
 * changed. Names who changed them, never an ICE server's credential.
 */
export const SipSettingsChangedEvent = defineEvent({
  topic: 'private-sip-settings',
  type: 'SipSettingsChangedEvent',
  payload: z.object({ projectId: z.number().int() }),
  audience: { kind: 'permission', permission: 'project_settings.view' },
});

/**
 * A call changed (issue 22 item 6; spec part 2 §7 "Call updates: subscribe to a channel for the user's number
 * and listen for the CallUpdated event carrying a call"): sent on `private-calls.{number}` for each number of
 * the call (the caller, the number dialled, those rung and the one that answered).
 */
export const CallUpdatedEvent = defineEvent({
  topic: (p: { number: string }) => RealtimeTopics.calls(p.number),
  type: 'CallUpdated',
  payload: z.object({
    projectId: z.number().int(),
    number: z.string(),
    call: z.record(z.string(), z.unknown()),
  }),
  audience: { kind: 'project' },
});

/**
 * An awaiting call changed (it became waiting, was joined, ended): the same CallUpdated, on the project's
 * `private-calls-waiting`, for every concierge who may intercept — those the call did not ring learn of it
 * here (docs/decisions.md "The dialer joins a waiting call").
 */
export const WaitingCallUpdatedEvent = defineEvent({
  topic: RealtimeTopics.waitingCalls,
  type: 'CallUpdated',
  payload: z.object({ projectId: z.number().int(), call: z.record(z.string(), z.unknown()) }),
  audience: { kind: 'permission', permission: 'calls.can_intercept_call_like_concierge' },
});

/** Every declared event, by type. */
export const eventDefs = {
  RoleChangedEvent,
  ProfileChangedEvent,
  ClientMessageEvent,
  DeviceStatusChangedEvent,
  DeviceTaskChangedEvent,
  DeviceEventCreatedEvent,
  AcsEventCreatedEvent,
  NotificationCreatedEvent,
  DeviceSearchEvent,
  SipNumberChangedEvent,
  SipTrunkChangedEvent,
  SipSettingsChangedEvent,
  CallUpdatedEvent,
  WaitingCallUpdatedEvent,
} as const;
