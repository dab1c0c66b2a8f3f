/**
 * The live states families declare (`defineResource({live})`, issue 25 item 3) against the events the server
 * declares: each names an event sent on that topic whose payload holds the row's id and every value it sets,
 * and fields of the family's record. A rule that names an event the server never sends would leave a list
 * silently dead.
 */
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { resources } from '@lintel/commands';
import { eventDefs, type EventDef } from './define';

const live = resources.flatMap((r) => r.live.map((rule) => ({ family: r, rule })));

describe('live rules of the families', () => {
  it('at least the devices declare one', () => {
    expect(live.map((l) => `${l.family.noun}:${l.rule.event}`)).toContain('device:DeviceStatusChangedEvent');
  });

  it.each(live.map((l) => [`${l.family.noun} ← ${l.rule.event}`, l] as const))(
    '%s',
    (_name, { family, rule }) => {
      const def = (eventDefs as Record<string, EventDef>)[rule.event];
      expect(def, `${rule.event} is not a declared event`).toBeDefined();
      expect(def!.topic, `${rule.event} is not sent on ${rule.topic}`).toBe(rule.topic);
      const payload = Object.keys((def!.payload as z.ZodObject).shape);
      expect(payload).toContain(rule.id);
      const record = Object.keys(family.record.shape);
      for (const [field, key] of Object.entries(rule.set)) {
        expect(record, `${family.noun} has no field ${field}`).toContain(field);
        expect(payload, `${rule.event} has no ${key}`).toContain(key);
      }
    },
  );
});
