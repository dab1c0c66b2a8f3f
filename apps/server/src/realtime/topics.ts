import type { z } from 'zod';
import { RealtimeTopics } from '@lintel/core';
import type { Gate } from '@lintel/core';
import type { AuthInfo } from '../context';
import { ClientMessageEvent, type EventDef } from '../events/define';

/** What a client's publish on a topic becomes: an event, sent through the outbox like any other. */
export interface Publication<P extends z.ZodType = z.ZodType> {
  event: EventDef<P>;
  payload: z.input<P>;
}

/**
 * A topic clients may subscribe to, declared once. `read` says who may subscribe (the websocket asks it
 * for every subscribe, and again when the subscriber's role changes); each event on the topic is then
 * sent only to those its own audience names (events/define.ts). `publish`, when present, turns a client's
 * text into an event; without it nobody publishes on the topic.
 */
export interface TopicDef {
  /** literal text with `{param}` parts, e.g. `private-users.{profileId}` */
  pattern: string;
  read(auth: AuthInfo, params: Record<string, string>): boolean;
  publish?(auth: AuthInfo, params: Record<string, string>, text: string): Publication | null;
  /**
   * What a publisher must be allowed, as a command's gate (permissions, licence flags): a publish goes
   * through `dispatch` as the socket's session, so these gates, their audit of a denial and the payload's
   * check apply as to any command; `publish` then says whether it is for these params. None: any signed-in user.
   */
  publishGate?: Gate;
  /**
   * Its events are scoped by group (`scope` audiences): the websocket reads the subscriber's groups
   * (`AuthInfo.groups`) when it subscribes and again with its role.
   */
  groups?: boolean;
}

export function defineTopic(def: TopicDef): TopicDef {
  return def;
}

/** The signed-in user's own topic: only that user reads it, and may publish on it (to their other consoles). */
export const UserTopic = defineTopic({
  pattern: 'private-users.{profileId}',
  read: (auth, p) => p.profileId === String(auth.userId),
  publish: (auth, p, text) =>
    p.profileId === String(auth.userId)
      ? { event: ClientMessageEvent, payload: { userId: auth.userId, projectId: auth.projectId, text } }
      : null,
});

/** Changes of the application every signed-in user of a project hears of (RoleChangedEvent); server-only. */
export const AppChangesTopic = defineTopic({
  pattern: 'private-app-changes',
  read: () => true,
});

/** Who may follow devices live: any device permission; each event then says whose scope it is for. */
const DeviceReaders = [
  'devices.view',
  'devices.view_descendant',
  'devices.view_all',
  'devices.view_events',
  'devices.view_tasks',
  'devices.tasks',
];

/**
 * The devices' live changes (status, tasks, events); server-only. Each event names the device's group and
 * reaches the subscribers whose device scope takes it in (events/define.ts `DeviceViewReach`).
 */
export const DevicesTopic = defineTopic({
  pattern: RealtimeTopics.devices,
  read: (auth) => DeviceReaders.some((p) => auth.permissions.has(p)),
  groups: true,
});

/** Who may follow calls live: those who may call or receive calls, and the concierges who intercept. */
const CallFollowers = [
  'calls.call_all',
  'calls.call_own_group',
  'calls.call_descendants',
  'calls.call_panel',
  'calls.concierge_receive',
  'calls.can_intercept_call_like_concierge',
];

/**
 * The calls of one virtual number (CallUpdated); server-only. Anyone of the project who may take part in
 * calls follows any of its numbers: a concierge follows the panels' and the flats' numbers (docs/decisions.md
 * "Telephony: routing and calls").
 */
export const CallsTopic = defineTopic({
  pattern: 'private-calls.{number}',
  read: (auth) => CallFollowers.some((p) => auth.permissions.has(p)),
});

/** The project's waiting calls (CallUpdated of awaiting calls): the concierges who may intercept. */
export const WaitingCallsTopic = defineTopic({
  pattern: RealtimeTopics.waitingCalls,
  read: (auth) => auth.permissions.has('calls.can_intercept_call_like_concierge'),
});

/** The access-control log, live: its readers (`access_control_events.view`, the whole project). */
export const AccessControlTopic = defineTopic({
  pattern: RealtimeTopics.accessControl,
  read: (auth) => auth.permissions.has('access_control_events.view'),
});

/** Every topic of the websocket. A family adds its own here (see docs/project-layout.md). */
/** Every topic (a test fixture may add one before the server starts: testing.ts `registerFixtureTopic`). */
export const topicDefs: TopicDef[] = [
  UserTopic,
  AppChangesTopic,
  DevicesTopic,
  CallsTopic,
  WaitingCallsTopic,
  AccessControlTopic,
];

const compiled = new Map<TopicDef, { re: RegExp; names: string[] }>();
function compile(def: TopicDef) {
  let c = compiled.get(def);
  if (!c) {
    const names: string[] = [];
    const source = def.pattern
      .split(/(\{[a-zA-Z]+\})/)
      .map((part) => {
        const m = /^\{([a-zA-Z]+)\}$/.exec(part);
        if (!m) return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
        names.push(m[1]!);
        return '([A-Za-z0-9_-]{1,64})';
      })
      .join('');
    c = { re: new RegExp(`^${source}$`), names };
    compiled.set(def, c);
  }
  return c;
}

/** The declared topic a name belongs to, with its parameters; null when no topic has that name. */
export function resolveTopic(
  name: string,
  defs: readonly TopicDef[] = topicDefs,
): { def: TopicDef; params: Record<string, string> } | null {
  for (const def of defs) {
    const { re, names } = compile(def);
    const m = re.exec(name);
    if (m) return { def, params: Object.fromEntries(names.map((n, i) => [n, m[i + 1]!])) };
  }
  return null;
}
