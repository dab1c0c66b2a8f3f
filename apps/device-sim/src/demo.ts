import fs from 'node:fs';
import { SimulatedDevice, type SimDeviceType } from './device';

/** What the server writes for the demo's devices (apps/server/src/devices/demo.ts). */
interface DemoFile {
  broker: string;
  devices: Array<{
    serial: string;
    type: string;
    name: string;
    password: string;
    http_host: string;
    http_port: number;
  }>;
}

const POLL_MS = 2000;
/** How often, on average, a demo door sees someone (a card, the exit button): a trickle, not a flood. */
const TRICKLE_MS = 30_000;

/** Cards of the demo building's residents and visitors: what people present at its doors. */
const DEMO_CARDS = ['10452871', '10452872', '10452905', '30011234', '77889900'];

/**
 * One moment at a demo door (issue 25 item 8: the demo's devices never logged anything, so the events page
 * and the home stayed empty on a first start): mostly a card presented — let through or refused by what the
 * device holds, as a real panel decides —, sometimes the exit button. `random` is 0..1.
 */
export async function demoMoment(device: SimulatedDevice, random: () => number): Promise<void> {
  const lock = random() < 0.8 ? 1 : 2;
  if (random() < 0.7) {
    const card = DEMO_CARDS[Math.floor(random() * DEMO_CARDS.length)]!;
    await device.presentCard(card, lock);
  } else await device.pressButton(lock);
}

/**
 * `device-sim --demo FILE`: runs the demo's simulated devices as the server lists them in FILE (their broker,
 * serial numbers and passwords), waiting for the file to appear (`lintel seed demo` registers them) and
 * following its changes (a password issued again, the demo seeded in another project). Returns a stop.
 */
export function runDemo(file: string, log: (line: string) => void): () => Promise<void> {
  const timers = new Set<NodeJS.Timeout>();
  // each device at its own pace: 0.5 to 1.5 times the average between two moments
  const trickle = (device: SimulatedDevice) => {
    const timer = setTimeout(
      () => {
        timers.delete(timer);
        if (![...running.values()].some((r) => r.device === device)) return;
        void demoMoment(device, Math.random)
          .catch(() => undefined)
          .finally(() => trickle(device));
      },
      TRICKLE_MS * (0.5 + Math.random()),
    );
    timer.unref();
    timers.add(timer);
  };
  const running = new Map<string, { key: string; device: SimulatedDevice }>();
  let last = '';
  let busy: Promise<void> = Promise.resolve();

  const apply = async (demo: DemoFile) => {
    const wanted = new Map(
      demo.devices.map((d) => [
        d.serial,
        { key: `${demo.broker} ${d.password} ${d.type} ${d.http_port}`, d },
      ]),
    );
    for (const [serial, r] of running)
      if (wanted.get(serial)?.key !== r.key) {
        await r.device.stop().catch(() => undefined);
        running.delete(serial);
      }
    for (const [serial, { key, d }] of wanted) {
      if (running.has(serial)) continue;
      const make = (httpPort: number) =>
        new SimulatedDevice({
          serial,
          type: d.type as SimDeviceType,
          name: d.name,
          management: { protocol: 'mqtt', url: demo.broker, login: serial, password: d.password },
          httpHost: d.http_host,
          httpPort,
        });
      let device = make(d.http_port);
      try {
        try {
          await device.start();
        } catch (err) {
          // its HTTP port is taken on this machine: any other will do (the demo's devices talk MQTT)
          if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
          await device.stop().catch(() => undefined);
          device = make(0);
          await device.start();
        }
        await device.heartbeat();
        running.set(serial, { key, device });
        // doors and controllers see people now and then; a lift controller does not log passages
        if (d.type !== 'liftcontroller') trickle(device);
        log(`demo device ${serial} (${d.type}) online, its API on ${d.http_host}:${device.httpPort}`);
      } catch (err) {
        await device.stop().catch(() => undefined);
        log(`demo device ${serial} could not start: ${(err as Error).message}`);
      }
    }
  };

  const check = () => {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      return;
    }
    if (text === last) return;
    last = text;
    let demo: DemoFile;
    try {
      demo = JSON.parse(text) as DemoFile;
    } catch {
      last = '';
      return;
    }
    busy = busy.then(() => apply(demo)).catch(() => undefined);
  };

  check();
  fs.watchFile(file, { interval: POLL_MS }, check);
  return async () => {
    fs.unwatchFile(file, check);
    for (const timer of timers) clearTimeout(timer);
    await busy;
    await Promise.all([...running.values()].map((r) => r.device.stop().catch(() => undefined)));
  };
}
