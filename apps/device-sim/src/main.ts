#!/usr/bin/env node
/**
 * `lintel-device-sim`: one simulated device from the command line, with the credentials the console shows
 * (device → credentials). Its HTTP API and control API listen on loopback (`--http-host`, `--http-port`).
 * Without `--url` it is a device fresh from the box: only its HTTP API, for a network search to find.
 *
 *   node apps/device-sim/dist/device-sim.js --serial SN1 --protocol mqtt --url mqtt://127.0.0.1:1884 \
 *     --login SN1 --password '…' [--type panel] [--heartbeat-ms 10000] [--http-host 127.0.0.1] [--http-port 0]
 *
 * `--demo FILE`: the demo's devices as the server lists them in FILE (`npm start` runs this).
 */
import { parseArgs } from 'node:util';
import { SimulatedDevice, type SimDeviceType } from './device';
import { runDemo } from './demo';

const { values } = parseArgs({
  options: {
    serial: { type: 'string' },
    protocol: { type: 'string', default: 'mqtt' },
    url: { type: 'string' },
    login: { type: 'string' },
    password: { type: 'string' },
    type: { type: 'string', default: 'panel' },
    'heartbeat-ms': { type: 'string', default: '10000' },
    'http-host': { type: 'string', default: '127.0.0.1' },
    'http-port': { type: 'string', default: '0' },
    demo: { type: 'string' },
  },
});

if (values.demo) {
  const stop = runDemo(values.demo, (line) => process.stdout.write(`  ${line}\n`));
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => void stop().then(() => process.exit(0)));
} else {
  if (!values.serial || (values.url && !values.password)) {
    process.stderr.write(
      'usage: device-sim --serial SN [--protocol mqtt|http --url URL --password PW [--login SN]] [--http-host IP]\n' +
        '       device-sim --demo FILE\n',
    );
    process.exit(2);
  }
  const protocol = values.protocol === 'http' ? 'http' : 'mqtt';
  const device = new SimulatedDevice({
    serial: values.serial,
    type: values.type as SimDeviceType,
    management: values.url
      ? { protocol, url: values.url, login: values.login ?? values.serial, password: values.password! }
      : undefined,
    heartbeatMs: Number(values['heartbeat-ms']),
    httpHost: values['http-host'],
    httpPort: Number(values['http-port']),
  });
  await device.start();
  if (values.url) await device.heartbeat();
  process.stdout.write(
    `${JSON.stringify({ serial: device.serial, http_host: device.httpHost, http_port: device.httpPort })}\n`,
  );
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => void device.stop().then(() => process.exit(0)));
}
