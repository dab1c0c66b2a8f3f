import { z } from 'zod';
import { DUMMY_PASSWORD } from '@lintel/core';
import { defineCommand } from '../command';
import { defineResource, IdParam } from '../resource';
import { NameLike, Ref, Timestamp } from '../refs';

/**
 * A webhook (issue 24 item 5, beyond the spec: the event feed Brivo, Kisi and Verkada give): an HTTPS
 * address of the project's that receives the platform's events as they happen — device, access, call,
 * alarm — each signed with the webhook's secret (`X-Lintel-Signature: t=<unix>,v1=<HMAC-SHA256 hex of
 * "t.body">`), retried with back-off, and logged. It sends only what its maker may receive, checked when each
 * event is sent. docs/decisions.md "Webhooks".
 */
export const Webhook = z.object({
  id: z.number().int(),
  name: z.string(),
  url: z.string(),
  /** the event types it receives (`DeviceEventCreatedEvent`, …); empty: every event its maker may receive */
  events: z.array(z.string()),
  is_active: z.boolean(),
  /** never the secret: the dummy placeholder */
  secret: z.string().nullable(),
  created_at: Timestamp,
  created_by_user: Ref.nullable(),
});
export type Webhook = z.infer<typeof Webhook>;

const EventType = z
  .string()
  .max(80)
  .regex(/^[A-Z][A-Za-z0-9]*$/);

/** A key long enough not to be guessed; the placeholder sent back keeps the stored one. */
const Secret = z.string().min(16).max(200).or(z.literal(DUMMY_PASSWORD)).meta({ secret: true });

const WebhookInput = z.object({
  name: NameLike,
  url: z.url({ protocol: /^https?$/ }).max(2000),
  events: z.array(EventType).max(50).default([]),
  is_active: z.boolean().default(true),
  secret: Secret,
});

export const webhookResource = defineResource({
  noun: 'webhook',
  segment: 'webhooks',
  record: Webhook,
  create: WebhookInput.strict(),
  update: WebhookInput.partial().strict(),
  table: 'webhooks',
  fields: {
    id: { kind: 'number', default: true, filterable: true, sortable: true },
    name: { kind: 'text', default: true, filterable: true, sortable: true },
    url: { kind: 'text', default: true, wide: true, filterable: true },
    events: { kind: 'text', default: true },
    is_active: { kind: 'boolean', default: true, filterable: true },
    created_at: { kind: 'date', filterable: true, sortable: true },
  },
  gates: {
    view: ['integrations.view', 'integrations.edit'],
    create: ['integrations.edit'],
    edit: ['integrations.edit'],
    delete: ['integrations.edit'],
  },
  ui: { path: '/general-settings/webhooks', icon: 'send', section: 'settings' },
  scopes: { owner: { creator: 'created_by' } },
  secrets: ['secret'],
  unique: ['name'],
});

/** One event sent (or being sent) to a webhook: the delivery log. */
export const WebhookDelivery = z.object({
  id: z.number().int(),
  event_id: z.number().int().nullable(),
  event_type: z.string(),
  state: z.enum(['pending', 'delivered', 'failed']),
  attempts: z.number().int(),
  /** the HTTP status the endpoint answered last, null when it could not be reached */
  response_status: z.number().int().nullable(),
  error: z.string().nullable(),
  created_at: Timestamp,
  delivered_at: Timestamp.nullable(),
});
export type WebhookDelivery = z.infer<typeof WebhookDelivery>;

/** The latest deliveries of a webhook, newest first. */
export const webhookDeliveries = defineCommand({
  id: 'webhook.deliveries',
  http: { method: 'GET', path: '/webhooks/:id/deliveries' },
  args: IdParam.extend({ limit: z.coerce.number().int().min(1).max(500).default(50) }),
  result: z.object({ data: z.array(WebhookDelivery) }),
  gates: { anyPermission: ['integrations.view', 'integrations.edit'] },
});

/** Sends a `WebhookTest` event to the webhook now (and logs it like any other), to check the endpoint. */
export const webhookTest = defineCommand({
  id: 'webhook.test',
  http: { method: 'POST', path: '/webhooks/:id/test' },
  args: IdParam,
  result: z.object({ delivery_id: z.number().int() }),
  gates: { anyPermission: ['integrations.edit'] },
});
