#!/usr/bin/env node
// `npm start`: install what is missing, build, and run the server with the console on the embedded database,
// and beside it the demo's simulated devices (`lintel seed demo` registers them; LINTEL_DEMO_DEVICES=0: not).
import { spawn } from 'node:child_process';
import path from 'node:path';
import { ensureInstalled, ensureSip, fail, root, run } from './ensure.mjs';

ensureInstalled();
// the SIP server (Kamailio): without it the server runs and says telephony is down
ensureSip({ required: false });
if (run(process.execPath, [path.join(root, 'scripts/build.mjs')]) !== 0)
  fail('The build failed (see above).');

const env = { ...process.env };
const demo = env.LINTEL_DEMO_DEVICES !== '0';
// the server writes the demo devices' broker and credentials here; the simulator follows the file
if (demo && !env.LINTEL_DEMO_DEVICES_FILE)
  env.LINTEL_DEMO_DEVICES_FILE = path.join(
    path.resolve(root, env.LINTEL_DATA_DIR || 'data'),
    'demo-devices.json',
  );
// the demo's simulated devices answer on loopback: the server may reach them there (off by default)
if (demo && env.LINTEL_DEVICE_ALLOW_LOOPBACK === undefined) env.LINTEL_DEVICE_ALLOW_LOOPBACK = '1';

const server = spawn(
  process.execPath,
  ['--enable-source-maps', path.join(root, 'apps/server/dist/main.js')],
  { cwd: root, stdio: 'inherit', env },
);
const devices = demo
  ? spawn(
      process.execPath,
      [path.join(root, 'apps/device-sim/dist/device-sim.js'), '--demo', env.LINTEL_DEMO_DEVICES_FILE],
      { cwd: root, stdio: 'inherit', env },
    )
  : null;
// the simulator failing leaves the server running: the demo's devices are a convenience
devices?.on('exit', (code) => {
  if (code) process.stderr.write(`  The demo's simulated devices stopped (exit ${code}).\n`);
});
for (const signal of ['SIGINT', 'SIGTERM'])
  process.on(signal, () => {
    devices?.kill(signal);
    server.kill(signal);
  });
server.on('exit', (code, signal) => {
  devices?.kill('SIGTERM');
  process.exit(code ?? (signal ? 0 : 1));
});
