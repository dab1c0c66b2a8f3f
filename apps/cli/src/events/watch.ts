import type { Command } from 'commander';
import WebSocket from 'ws';
import {
  RealtimeClient,
  RealtimeTopics,
  WsReply,
  errorLookupKey,
  type WebSocketLike,
  type WsServerMessage,
} from '@lintel/core';
import { execute, signedIn } from '../api';
import type { CliContext } from '../context';
import { CliError } from '../errors';
import { ExitCode } from '../exit-codes';
import { hasText, t, tr } from '../i18n';

export interface WatchOptions {
  topic?: string[];
  json?: boolean;
  /** only events of these types (a family's own watch: `lintel devices events watch`) */
  types?: readonly string[];
}

const collect = (v: string, prev: string[] | undefined) => [...(prev ?? []), v];

/** One event as a person reads it: time, topic, type, then the payload's fields. */
export function eventLine(m: WsServerMessage, now = new Date()): string {
  const { type, ...rest } = m.data;
  const fields = Object.entries(rest)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ');
  return [now.toTimeString().slice(0, 8), m.topic, type, fields].filter(Boolean).join('  ');
}

/** A code in words (`web:device_events.kinds.call`), else the code itself. */
const word = (prefix: string, code: unknown): string => {
  if (typeof code !== 'string' || !code) return '';
  const key = `${prefix}.${code}`;
  return hasText(key) ? tr(key) : code;
};

/** The event's own time (`at`) in the terminal's zone, else now. */
const timeOf = (data: Record<string, unknown>, now: Date): string => {
  const at = typeof data.at === 'string' ? new Date(data.at) : now;
  return (Number.isNaN(at.getTime()) ? now : at).toTimeString().slice(0, 8);
};

/**
 * Events a person reads in words (issue 25 item 6): the device by its name, kinds and results as the
 * console writes them, no ids or type names. `name(id)` reads a device's name (cached by the caller).
 */
const personViews: Record<
  string,
  (data: Record<string, unknown>, name: (id: number) => Promise<string>) => Promise<string[]>
> = {
  DeviceEventCreatedEvent: async (d, name) => [
    await name(Number(d.deviceId)),
    word('web:device_events.kinds', d.kind),
    word('web:device_events.results', d.result),
  ],
  DeviceStatusChangedEvent: async (d, name) => [
    await name(Number(d.deviceId)),
    word('web:values.status', d.status),
    word('cli:events.causes', d.cause),
  ],
  DeviceTaskChangedEvent: async (d, name) => [
    await name(Number(d.deviceId)),
    word('web:device_tasks.kinds', d.kind),
    word('web:device_tasks.states', d.state),
  ],
};

/**
 * The line of an event for a person: the event's own words when it has a view (devices by name), else the
 * generic `time topic type key=value` line.
 */
export async function personLine(
  m: WsServerMessage,
  name: (id: number) => Promise<string>,
  now = new Date(),
): Promise<string> {
  const view = personViews[m.data.type];
  if (!view) return eventLine(m, now);
  const data = m.data as Record<string, unknown>;
  return [timeOf(data, now), ...(await view(data, name))].filter(Boolean).join('  ');
}

/**
 * `lintel events watch`: a live tail of the websocket. By default the signed-in user's own topic and the
 * application's changes; `--topic` names others. Each event is a line (`--json`: NDJSON, the server's
 * message as sent). States and refusals go to stderr. Reconnects as the console does; Ctrl-C ends it with 0.
 */
export async function watchEvents(ctx: CliContext, opts: WatchOptions): Promise<void> {
  const { api } = signedIn(ctx);
  const topics = opts.topic?.length
    ? [...new Set(opts.topic)]
    : [RealtimeTopics.user((await execute(api, 'profile.get', {})).id), RealtimeTopics.appChanges];
  const client = new RealtimeClient({
    api,
    socket: (url) => new WebSocket(url) as unknown as WebSocketLike,
  });
  const note = (line: string) => ctx.stderr.write(`${line}\n`);
  // devices named once each (a device the caller may not read keeps its number)
  const names = new Map<number, Promise<string>>();
  const name = (id: number): Promise<string> => {
    let known = names.get(id);
    if (!known) {
      known = execute(api, 'device.get', { id }).then(
        (d) => d.name,
        () => `#${id}`,
      );
      names.set(id, known);
    }
    return known;
  };
  // lines keep the events' order while names are read
  let printing: Promise<void> = Promise.resolve();
  const refused = new Set<string>();
  const subscribed = new Set<string>();
  let finish!: (err?: CliError) => void;
  const done = new Promise<void>((resolve, reject) => {
    finish = (err) => (err ? reject(err) : resolve());
  });

  const print = (m: WsServerMessage) => {
    if (m.data.type === WsReply.error) {
      const code = String(m.data.error_code);
      const key = `errors:http.${errorLookupKey(code)}`;
      note(
        t('events.refused', {
          topic: m.topic,
          reason: hasText(key) ? tr(key, (m.data.data ?? {}) as Record<string, unknown>) : code,
        }),
      );
      refused.add(String(m.topic));
      if (refused.size === topics.length) {
        client.disconnect();
        finish(new CliError('no_topics', code === 'item_not_found' ? ExitCode.notFound : ExitCode.refused));
      }
      return;
    }
    if (m.data.type === WsReply.resync) {
      if (opts.json) ctx.stdout.write(`${JSON.stringify(m)}\n`);
      else note(t('events.resync', { topic: m.topic }));
      return;
    }
    if (m.data.type === WsReply.subscribed) {
      // said once every topic is subscribed: from then on no event of them is missed
      subscribed.add(String(m.topic));
      if (subscribed.size + refused.size === topics.length)
        note(t('events.connected', { topics: [...subscribed].join(', ') }));
      return;
    }
    if (m.id === undefined) return; // unsubscribed, published: the protocol's own
    if (opts.types && !opts.types.includes(m.data.type)) return;
    if (opts.json) ctx.stdout.write(`${JSON.stringify(m)}\n`);
    else {
      const line = personLine(m, name);
      printing = printing.then(async () => void ctx.stdout.write(`${await line}\n`));
    }
  };
  for (const topic of topics) client.subscribe(topic, print);
  client.onError((m) => note(String(m.data.message)));
  let was = client.state;
  client.onState((s) => {
    if (s === 'connecting') subscribed.clear();
    else if (s === 'disconnected' && was === 'connected' && !stopping) note(t('events.disconnected'));
    was = s;
  });
  client.onSignedOut(() => finish(new CliError('not_signed_in', ExitCode.signedOut)));

  let stopping = false;
  const stop = () => {
    stopping = true;
    client.disconnect();
    finish();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  client.connect();
  try {
    await done;
  } finally {
    process.removeListener('SIGINT', stop);
    process.removeListener('SIGTERM', stop);
    client.disconnect();
  }
}

export function addEvents(program: Command, ctx: CliContext): void {
  const events = program.command('events').description(t('events.description'));
  events
    .command('watch')
    .description(t('events.watch_description'))
    .option('--topic <topic>', t('events.topic_option'), collect)
    .option('--json', t('events.json_option'))
    .action((opts: WatchOptions) => watchEvents(ctx, opts));
  // the device events, live: `lintel devices events watch` (and `lintel device-events watch`)
  const groups = [
    program.commands.find((c) => c.name() === 'device-events'),
    program.commands.find((c) => c.name() === 'devices')?.commands.find((c) => c.name() === 'events'),
  ];
  for (const group of groups)
    group
      ?.command('watch')
      .description(t('events.device_events_watch'))
      .option('--json', t('events.json_option'))
      .action((opts: WatchOptions) =>
        watchEvents(ctx, {
          json: opts.json,
          topic: [RealtimeTopics.devices],
          types: ['DeviceEventCreatedEvent'],
        }),
      );
  // the access-control log, live: `lintel acs-events watch`
  program.commands
    .find((c) => c.name() === 'acs-events')
    ?.command('watch')
    .description(t('events.acs_events_watch'))
    .option('--json', t('events.json_option'))
    .action((opts: WatchOptions) =>
      watchEvents(ctx, {
        json: opts.json,
        topic: [RealtimeTopics.accessControl],
        types: ['AcsEventCreatedEvent'],
      }),
    );
}
