/**
 * What the access-control device tests share: a simulated panel registered through the API and online, and a
 * sync driven to its end (planned, every task sent, planned again until nothing is left).
 */
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { SimulatedDevice } from '@lintel/device-sim';
import type { TestServer } from '../support/server';
import { uid } from '../support/fixtures';
import { until } from './mqtt-clients';

/** Plans what changed and sends every task it made, until nothing is left to send. */
export async function settleAccessSync(ts: TestServer): Promise<void> {
  const { accessSync, jobs } = ts.server.context;
  await accessSync.poll();
  for (let round = 0; round < 200; round++) {
    if ((await jobs.drain()) === 0) {
      // a task's outcome can itself ask for a new plan (a resync's list, a batch sent again)
      const again = await accessSync.poll();
      if (again.every((o) => o.tasks === 0)) return;
    }
  }
  throw new Error('the sync did not settle');
}

/**
 * A panel on mqtt in `domain` (its serial `{prefix}-…`, more of the device's fields in `fields`) with its
 * simulator started and online; the simulator is added to `sims` for the file's clean-up.
 */
export async function simulatedPanel(
  api: ApiClient,
  opts: { domain: number; sims: SimulatedDevice[]; prefix: string; fields?: Record<string, unknown> },
): Promise<{ id: number; name: string; serial: string; sim: SimulatedDevice }> {
  const serial = `${opts.prefix}-${uid()}`;
  const { data } = await getCommand('device.create').run({ api }, {
    name: `Door ${serial}`,
    type: 'panel',
    serial_number: serial,
    domain_id: opts.domain,
    protocol: 'mqtt',
    ...opts.fields,
  } as never);
  const c = await getCommand('device.credentials').run({ api }, { id: data.id });
  const sim = new SimulatedDevice({
    serial,
    management: { protocol: 'mqtt', url: c.mqtt.url, login: c.login, password: c.password },
    heartbeatMs: 0,
  });
  opts.sims.push(sim);
  await sim.start();
  await until(async () => (await getCommand('device.get').run({ api }, { id: data.id })).status === 'online');
  return { id: data.id, name: data.name, serial, sim };
}
