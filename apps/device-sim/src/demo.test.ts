import { afterEach, describe, expect, it } from 'vitest';
import { SimulatedDevice } from './device';
import { demoMoment } from './demo';

/** A demo door not pointed at a platform: it keeps what it logs (`pendingLogs`). */
const devices: SimulatedDevice[] = [];
const door = () => {
  const d = new SimulatedDevice({ serial: `DEMO-${devices.length}`, type: 'panel', name: 'Entrance' });
  devices.push(d);
  return d;
};
afterEach(async () => {
  for (const d of devices.splice(0)) await d.stop().catch(() => undefined);
});

/** A random source that says these numbers in turn. */
const says = (...n: number[]) => {
  let i = 0;
  return () => n[i++ % n.length]!;
};

describe("the demo building's doors (issue 25 item 8: its devices logged nothing)", () => {
  it('see a card now and then, decided by what the door holds, and the exit button', async () => {
    const d = door();
    // lock 1, a card: a card the door does not hold is refused, and logged
    await demoMoment(d, says(0.1, 0.1, 0.1));
    expect(d.pendingLogs.at(-1)).toMatchObject({ kind: 'identifier_refused', lock: 1, result: 'denied' });
    // lock 2, the exit button: the lock opens and the log says how
    await demoMoment(d, says(0.9, 0.9));
    expect(d.pendingLogs.at(-1)).toMatchObject({ kind: 'door_opened', lock: 2, reason: 'button' });
    expect(d.locks[2]).toMatchObject({ open: true, opened: 1 });
  });
});
