import { z } from 'zod';
import type { ErrorKey } from './errors';

/**
 * The application websocket of spec part 2 §7 "Real-time channels": `/api/v0/ws?access_token=…`. What the
 * client sends and what the server answers, shared by the server (apps/server/src/realtime/websocket.ts), the
 * client below (realtime-client.ts), the console and the CLI.
 */
export const WS_PATH = 'ws';

/** The topics of the spec. Later families add theirs on the server (apps/server/src/realtime/topics.ts). */
export const RealtimeTopics = {
  appChanges: 'private-app-changes',
  /** the devices' live changes: status, tasks, events (each event says its group: scoped per reader) */
  devices: 'private-devices',
  /** the access-control log's decisions, as they are stored */
  accessControl: 'private-access-control',
  user: (profileId: number) => `private-users.${profileId}`,
  /** the calls of one virtual number (CallUpdated) */
  calls: (number: string) => `private-calls.${number}`,
  /** the project's waiting (awaiting) calls, for the concierges who may intercept (CallUpdated) */
  waitingCalls: 'private-calls-waiting',
} as const;

/** Limits of one socket (ours: the spec gives none; docs/decisions.md "The websocket"). */
export const WsLimits = {
  /** a frame larger than this closes the socket with 1009 (message too big) */
  maxMessageBytes: 16 * 1024,
  /** topic names */
  maxTopicLength: 200,
  /** the text of a publish */
  maxTextLength: 4000,
  /** topics one socket may hold at once */
  maxSubscriptions: 100,
  /** sockets one user may hold open on one instance; the next is closed with 1008 `too_many_requests` */
  maxSocketsPerUser: 20,
  /** messages a socket may send per window; past it each is refused, past twice it the socket is closed */
  messagesPerWindow: 60,
  windowS: 10,
  /** events a re-subscription replays from the server's backlog; more missed than this: `resync` */
  backlogLimit: 200,
} as const;

/**
 * Why the server closed a socket. 4401: the access token is expired or not valid — refresh it and connect
 * again at once (a failed refresh signs out). The others: connect again after the reconnect delay.
 */
export const WsClose = {
  normal: 1000,
  /** the server is stopping (a restart, a deploy) */
  goingAway: 1001,
  /** the socket broke the protocol's limits (message rate) */
  policy: 1008,
  /** a frame over WsLimits.maxMessageBytes */
  tooBig: 1009,
  /** this instance does not serve the websocket right now */
  tryAgainLater: 1013,
  unauthenticated: 4401,
  /** the client read too slowly: what the server had to send piled up */
  tooSlow: 4408,
} as const;

export const WsCloseReason = {
  tokenExpired: 'token_expired',
  invalidToken: 'invalid_token',
  serverStopping: 'server_stopping',
  notServed: 'not_served',
  tooManyMessages: 'too_many_messages',
  /** the user has WsLimits.maxSocketsPerUser sockets open already (the catalogue's code) */
  tooManySockets: 'too_many_requests',
  tooSlow: 'too_slow',
} as const;

const Topic = z.string().min(1).max(WsLimits.maxTopicLength);

/** What a client sends: subscribe or unsubscribe a topic, or publish a text on one. */
export const WsClientMessage = z.discriminatedUnion('type', [
  z
    .object({
      type: z.literal('subscribe'),
      topic: Topic,
      /** the last event id the client holds of this topic: the server replays what came after */
      since: z.number().int().min(0).optional(),
    })
    .strict(),
  z.object({ type: z.literal('unsubscribe'), topic: Topic }).strict(),
  z
    .object({ type: z.literal('publish'), topic: Topic, text: z.string().min(1).max(WsLimits.maxTextLength) })
    .strict(),
]);
export type WsClientMessage = z.infer<typeof WsClientMessage>;

/** The protocol's own message types; an event's type is its declared name (`RoleChangedEvent`). */
export const WsReply = {
  /** the socket is signed in and ready: `{topic: null, data: {type, user_id, expires_at}}` */
  connected: 'connected',
  /** `{topic, data: {type, last_id}}`: last_id is where the backlog of the next re-subscription starts */
  subscribed: 'subscribed',
  unsubscribed: 'unsubscribed',
  /** `{topic, data: {type, id}}` */
  published: 'published',
  /** more was missed than the backlog holds: re-fetch what this topic's events would have changed */
  resync: 'resync',
  /** `{topic, data: {type, message, error_code, data}}`: a refused message, the catalogue's code */
  error: 'error',
} as const;

/** What the server sends: a topic (null for the connection itself), an event id for events, and data with a type. */
export interface WsServerMessage {
  topic: string | null;
  id?: number;
  data: { type: string } & Record<string, unknown>;
}

export const WsServerMessage = z.object({
  topic: z.string().nullable(),
  id: z.number().int().optional(),
  data: z.looseObject({ type: z.string() }),
});

/** The error reply for a refused client message. */
export function wsError(
  topic: string | null,
  key: ErrorKey,
  data: Record<string, unknown> | null = null,
): WsServerMessage {
  return { topic, data: { type: WsReply.error, message: key, error_code: key, data } };
}
