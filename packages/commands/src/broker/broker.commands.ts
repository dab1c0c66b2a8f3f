import { z } from 'zod';
import { defineCommand, NoArgs } from '../command';
import { fileArg } from '../upload';

/**
 * The MQTT broker devices sign in to (spec part 2 §7 "Broker service: status, restart {type}"; "Project
 * settings: broker GET and POST multipart"; issue 24 item 2). It is the installation's, like the devices' topic
 * space: the embedded aedes broker `npm start` runs, or the external one `MQTT_URL` names (Mosquitto). What the
 * server says of it is what it knows: of its own broker everything, of an external one what the connection and
 * the broker's `$SYS` topics tell. docs/decisions.md "The MQTT broker".
 */
const VIEW = { anyPermission: ['project_settings.view', 'project_settings.change'] } as const;
const CHANGE = { anyPermission: ['project_settings.change'] } as const;

/** A certificate as shown: never its key, never the PEM itself. */
export const CertificateInfo = z.object({
  subject: z.string(),
  issuer: z.string(),
  valid_from: z.string(),
  valid_to: z.string(),
  /** SHA-256 of the DER, `AB:CD:…` */
  fingerprint: z.string(),
  /** the DNS names and addresses it is for (subjectAltName) */
  names: z.array(z.string()),
});
export type CertificateInfo = z.infer<typeof CertificateInfo>;

export const BrokerListener = z.object({ protocol: z.enum(['mqtt', 'mqtts']), port: z.number().int() });

export const BrokerStatus = z.object({
  /** the embedded broker of this instance, or MQTT_URL's */
  kind: z.enum(['embedded', 'external']),
  /** up: the platform is connected to it; down: it is not (stopped, unreachable, being restarted) */
  state: z.enum(['up', 'down']),
  /** the address devices are told (never a password) */
  url: z.string(),
  /** the software and version: aedes's own, or the external broker's `$SYS/broker/version` when it says it */
  version: z.string().nullable(),
  /** the embedded broker's listeners; an external broker's are its own */
  listeners: z.array(BrokerListener),
  /** clients connected now (the platform included): the embedded broker's count, `$SYS/broker/clients/connected` */
  clients: z.number().int().nullable(),
  /** when the embedded broker last started; an external broker's uptime from `$SYS/broker/uptime` */
  started_at: z.string().nullable(),
  uptime_s: z.number().int().nullable(),
  /** restarts by `broker.restart` since this instance started */
  restarts: z.number().int(),
  /** the device accounts are kept in the external broker's dynamic-security plugin (MQTT_DYNSEC) */
  dynsec: z.boolean(),
  /** device messages this instance handled, and refused (over a device's budget) */
  messages_handled: z.number().int(),
  messages_refused: z.number().int(),
  /** the certificate the broker presents over TLS: the embedded broker's, an external `mqtts://` broker's */
  certificate: CertificateInfo.nullable(),
  /** the instance that answered (a status is of one instance: each runs its embedded broker) */
  instance: z.string(),
});
export type BrokerStatus = z.infer<typeof BrokerStatus>;

export const brokerStatus = defineCommand({
  id: 'broker.status',
  http: { method: 'GET', path: '/broker/status' },
  args: NoArgs,
  result: BrokerStatus,
  gates: VIEW,
});

/**
 * Restarts (spec "restart {type}"): `broker`, the embedded broker itself — its listeners closed, every client
 * disconnected, started again on the same ports; devices reconnect by themselves — refused with an external
 * broker, which Lintel does not run (`cant_perform_action {reason: 'external_broker'}`); `connection`, the
 * platform's own connection to its broker, made again with its subscriptions. The reply is the status after it.
 */
export const brokerRestart = defineCommand({
  id: 'broker.restart',
  http: { method: 'POST', path: '/broker/restart' },
  args: z.object({ type: z.enum(['broker', 'connection']).default('broker') }).strict(),
  result: BrokerStatus,
  gates: CHANGE,
  timeoutMs: 60_000,
});

/**
 * The broker's settings: the TLS certificate and key the embedded broker serves `mqtts://` with on
 * MQTT_TLS_PORT. The key never leaves the server (its placeholder does).
 */
export const BrokerSettings = z.object({
  /** the port of the TLS listener (MQTT_TLS_PORT), null when this instance has none */
  tls_port: z.number().int().nullable(),
  certificate: CertificateInfo.nullable(),
  /** the placeholder when a key is stored, else empty */
  key: z.string(),
});

const BrokerSettingsReply = z.object({
  data: BrokerSettings,
  /** a certificate can be uploaded: the broker is the embedded one */
  applies: z.boolean(),
});

export const settingsBrokerGet = defineCommand({
  id: 'settings.broker_get',
  http: { method: 'GET', path: '/settings/broker' },
  args: NoArgs,
  result: BrokerSettingsReply,
  gates: VIEW,
});

/**
 * Uploads the embedded broker's certificate (PEM, its chain after it) and its private key (PEM, unencrypted):
 * refused unless the key is the certificate's (`check_fields_data`), and with an external broker. The TLS
 * listener takes it at once; connections already open keep theirs.
 */
export const settingsBrokerUpdate = defineCommand({
  id: 'settings.broker_update',
  http: { method: 'POST', path: '/settings/broker' },
  args: z.object({ certificate: fileArg('certificate'), key: fileArg('certificate') }),
  result: BrokerSettingsReply,
  gates: CHANGE,
});

/** Removes the certificate and key: the TLS listener closes. */
export const settingsBrokerDelete = defineCommand({
  id: 'settings.broker_delete',
  http: { method: 'DELETE', path: '/settings/broker' },
  args: NoArgs,
  result: BrokerSettingsReply,
  gates: CHANGE,
});
