import { randomInt } from 'node:crypto';
import { sql } from 'kysely';
import { DeviceSettings, deviceResource, type Device } from '@lintel/commands';
import { DUMMY_PASSWORD } from '@lintel/core';
import { AppError } from '../../errors';
import type { FamilyStore } from '../../engine/family';
import { tableStore } from '../../engine/table-store';
import { createTask, stopAllOf } from '../../devices/tasks';
import { assertDeviceIntegration } from '../../integrations/device-integration';
import { queueBrokerAccount } from '../../devices/dynsec';

const PASSWORD_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/**
 * A password Lintel issues a device: 24 letters and digits (about 143 bits), each drawn without bias,
 * within the 32 a device's management settings take. Nothing a broker's password file or a URL would have
 * to escape, and no `-` or `_`: an installer types it on a panel, and a password that begins with `-` is
 * taken for an option by command-line tools (the simulator's `--password` among them).
 */
export const issuePassword = (): string =>
  Array.from({ length: 24 }, () => PASSWORD_ALPHABET[randomInt(PASSWORD_ALPHABET.length)]).join('');

type Values = Record<string, unknown>;
const isRecord = (v: unknown): v is Values => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `b` merged into `a`, section by section (a PATCH of one setting keeps the others). */
function deepMerge(a: Values, b: Values): Values {
  const out: Values = { ...a };
  for (const [k, v] of Object.entries(b)) {
    if (v === undefined) continue;
    out[k] = isRecord(v) && isRecord(a[k]) ? deepMerge(a[k], v) : v;
  }
  return out;
}

/** A write's values as stored: secrets left as they are when the placeholder comes back. */
function prepare(values: Values): Values {
  const out = { ...values };
  for (const secret of ['password', 'device_password'])
    if (out[secret] === DUMMY_PASSWORD || out[secret] === undefined) delete out[secret];
  if (typeof out.model === 'undefined') delete out.model;
  return out;
}

const base = tableStore(deviceResource, {
  table: 'devices',
  computed: {
    login: sql`t.serial_number`,
    // a stored secret is never sent back: the placeholder says there is one
    password: sql`case when t.password <> '' then ${DUMMY_PASSWORD} else '' end`,
    device_password: sql`case when t.device_password <> '' then ${DUMMY_PASSWORD} else '' end`,
  },
  prepare,
});

/** A duplicate serial number is the catalogue's "serial number in use" (spec part 2 §8). */
function serialInUse(err: unknown, serial: unknown): never {
  if (err instanceof AppError && err.key === 'value_not_unique' && err.data?.field === 'serial_number')
    throw new AppError('serial_number_in_use', { serial_number: serial });
  throw err;
}

/**
 * Devices: the declaration's store (its group, `domain` in the record, comes from `refs.domain_id`), plus
 * what a device needs beyond a plain row, which is why it has a store of its own: its password issued on
 * create and never read back, settings merged with their defaults on read and section by section on update,
 * the device tasks and broker accounts a change queues, and a duplicate serial number named as the catalogue
 * does.
 */
export const deviceStore: FamilyStore<typeof deviceResource> = {
  ...base,
  entity: 'device',

  async load(q, ids) {
    const rows = await base.load(q, ids);
    return rows.map((r) => ({
      ...r,
      device_settings: DeviceSettings.parse(isRecord(r.device_settings) ? r.device_settings : {}),
    })) as Device[];
  },

  async create(trx, args, ctx) {
    const values: Values = { ...args, password: args.password ?? issuePassword() };
    if (values.password === DUMMY_PASSWORD) values.password = issuePassword();
    const id = await base
      .create(trx, values as never, ctx)
      .catch((e: unknown) => serialInUse(e, args.serial_number));
    await assertDeviceIntegration(trx, ctx.caller.projectId, id);
    // its account on an external broker (MQTT_DYNSEC), made once this commits
    await queueBrokerAccount(ctx.app, trx, args.serial_number);
    return id;
  },

  async update(trx, id, args, ctx, before) {
    const values: Values = { ...(args as Values) };
    for (const key of ['management', 'device_settings'] as const)
      if (isRecord(values[key])) values[key] = deepMerge(before[key] as Values, values[key] as Values);
    if (Object.keys(values).length) values.updated_at = ctx.app.clock.now();
    await base
      .update(trx, id, values as never, ctx, before)
      .catch((e: unknown) => serialInUse(e, (args as Values).serial_number));
    if (isRecord(values.device_settings) || values.domain_id !== undefined)
      await assertDeviceIntegration(trx, ctx.caller.projectId, id);
    // changed settings must reach the device: a task, in this transaction (none: the platform does not
    // talk to it; they go with the init once it has a protocol)
    if (
      (values.protocol ?? before.protocol) !== 'none' &&
      isRecord(values.device_settings) &&
      JSON.stringify(DeviceSettings.parse(values.device_settings)) !==
        JSON.stringify(DeviceSettings.parse(isRecord(before.device_settings) ? before.device_settings : {}))
    )
      await createTask(ctx.app, trx, id, 'settings', ctx.caller.userId);
    // set to none: nothing reaches it any more, its open tasks stop (as `device.set_protocol` does)
    if (values.protocol === 'none' && before.protocol !== 'none') await stopAllOf(ctx.app, trx, id);
    // a new password or serial number: the device's broker connections under the old ones end
    const serialChanged = values.serial_number !== undefined && values.serial_number !== before.serial_number;
    if ((typeof values.password === 'string' && values.password !== DUMMY_PASSWORD) || serialChanged) {
      ctx.app.devices.forget(before.serial_number);
      // the external broker's accounts follow: the old serial's goes, the new one's is made or updated
      await queueBrokerAccount(ctx.app, trx, before.serial_number);
      if (serialChanged) await queueBrokerAccount(ctx.app, trx, String(values.serial_number));
    }
  },

  async remove(trx, id, ctx, options) {
    const r = await sql<{
      serial_number: string;
    }>`select serial_number from devices where id = ${id}`.execute(trx);
    const kept = await base.remove(trx, id, ctx, options);
    if (!kept && r.rows[0]) await queueBrokerAccount(ctx.app, trx, r.rows[0].serial_number);
    return kept;
  },

  // the embedded broker lets the device go only once the delete committed (a dry run deletes nothing)
  afterRemove(ctx, _id, before) {
    ctx.app.devices.forget(before.serial_number);
  },
};
