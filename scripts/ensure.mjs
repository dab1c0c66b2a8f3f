// What `npm start` and `npm test` need before anything else, with Node's built-ins only (nothing from
// node_modules may be imported here: it may not be installed yet).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export function fail(message) {
  console.error(`\n  ${message.split('\n').join('\n  ')}\n`);
  process.exit(1);
}

export function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', ...opts });
  if (r.error) fail(`${cmd} could not run: ${r.error.message}`);
  return r.status ?? 1;
}

export function checkNode() {
  const [major, minor] = process.versions.node.split('.').map(Number);
  if (major < 20 || (major === 20 && minor < 19))
    fail(`Lintel needs Node.js 20.19 or newer; this is ${process.version}.`);
}

/** Installs the npm packages when node_modules is missing or older than package-lock.json. */
export function ensureInstalled() {
  checkNode();
  const lock = path.join(root, 'package-lock.json');
  const stamp = path.join(root, 'node_modules', '.package-lock.json');
  const fresh =
    fs.existsSync(stamp) && (!fs.existsSync(lock) || fs.statSync(stamp).mtimeMs >= fs.statSync(lock).mtimeMs);
  if (fresh) return;
  console.log('Installing npm packages…');
  const status = run(
    'npm',
    fs.existsSync(lock) ? ['ci', '--no-audit', '--no-fund'] : ['install', '--no-audit', '--no-fund'],
  );
  if (status !== 0) fail('npm could not install the packages (see above).');
}

export const chromiumCandidates = () =>
  [
    process.env.CHROMIUM_PATH,
    '/usr/bin/chromium',
    '/usr/bin/chromium-browser',
    '/usr/bin/google-chrome',
  ].filter(Boolean);

export function findChromium() {
  return chromiumCandidates().find((p) => fs.existsSync(p));
}

/** Browser tests use the system's Chromium. On Debian as root it is installed with apt-get. */
export function ensureChromium() {
  if (findChromium()) return;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const debian = fs.existsSync('/etc/debian_version') && fs.existsSync('/usr/bin/apt-get');
  if (isRoot && debian) {
    console.log('Installing Chromium from Debian (apt-get install chromium)…');
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    run('apt-get', ['update', '-qq'], { env });
    if (run('apt-get', ['install', '-y', '-qq', 'chromium'], { env }) === 0 && findChromium()) return;
    fail('apt-get could not install chromium (see above).');
  }
  fail(
    'The browser tests need Chromium, and none was found.\n' +
      'Install it (Debian/Ubuntu: `sudo apt-get install chromium`; macOS: install Google Chrome),\n' +
      'or point CHROMIUM_PATH at a Chromium or Chrome binary, then run `npm test` again.',
  );
}

/**
 * The Mosquitto broker's binary (Debian's `mosquitto`): a test restarts a broker of its own on a free port
 * (tests/devices/broker-restart.test.ts). Installed without starting the package's service (policy-rc.d
 * refuses it for the install), so a machine that already runs a broker on 1883 keeps it.
 */
export function ensureMosquittoBroker() {
  const has = () => ['/usr/sbin/mosquitto', '/usr/bin/mosquitto'].some((p) => fs.existsSync(p));
  if (has()) return;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const debian = fs.existsSync('/etc/debian_version') && fs.existsSync('/usr/bin/apt-get');
  if (isRoot && debian) {
    console.log(
      'Installing the Mosquitto broker from Debian (apt-get install mosquitto, service not started)…',
    );
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    const policy = '/usr/sbin/policy-rc.d';
    const hadPolicy = fs.existsSync(policy);
    if (!hadPolicy) fs.writeFileSync(policy, '#!/bin/sh\nexit 101\n', { mode: 0o755 });
    try {
      run('apt-get', ['update', '-qq'], { env });
      if (run('apt-get', ['install', '-y', '-qq', 'mosquitto'], { env }) === 0 && has()) return;
    } finally {
      if (!hadPolicy) fs.rmSync(policy, { force: true });
    }
    fail('apt-get could not install mosquitto (see above).');
  }
  fail(
    'A device test restarts a Mosquitto broker of its own, and no mosquitto binary was found.\n' +
      'Install it (Debian/Ubuntu: `sudo apt-get install mosquitto`; macOS: `brew install mosquitto`),\n' +
      'then run `npm test` again.',
  );
}

/**
 * The device tests (tests/devices) use Debian's mosquitto-clients (`mosquitto_pub`, `mosquitto_sub`) as a
 * device that is not ours. On Debian as root they are installed with apt-get.
 */
export function ensureMosquittoClients() {
  const has = () => ['/usr/bin/mosquitto_pub', '/usr/bin/mosquitto_sub'].every((p) => fs.existsSync(p));
  if (has()) return;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const debian = fs.existsSync('/etc/debian_version') && fs.existsSync('/usr/bin/apt-get');
  if (isRoot && debian) {
    console.log('Installing the MQTT clients from Debian (apt-get install mosquitto-clients)…');
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    run('apt-get', ['update', '-qq'], { env });
    if (run('apt-get', ['install', '-y', '-qq', 'mosquitto-clients'], { env }) === 0 && has()) return;
    fail('apt-get could not install mosquitto-clients (see above).');
  }
  fail(
    'The device tests need mosquitto_pub and mosquitto_sub, and none were found.\n' +
      'Install them (Debian/Ubuntu: `sudo apt-get install mosquitto-clients`; macOS: `brew install mosquitto`),\n' +
      'then run `npm test` again. They also need an MQTT broker on 127.0.0.1:1883 (Mosquitto).',
  );
}

/** Debian's packages of the SIP server and of the SIP client the tests use (ensureSip). */
export const sipPackages = [
  'kamailio',
  'kamailio-websocket-modules',
  'kamailio-tls-modules',
  'kamailio-json-modules',
  // http_client: Kamailio asks Lintel where each call goes (apps/server/sip/kamailio.cfg.tmpl)
  'kamailio-utils-modules',
  'sip-tester',
];
/**
 * What only the tests need besides: the door panel of the web dialer's test (tests/e2e/dialer-door.test.ts), and
 * strace, which holds the SIP server's sends to force the order of its processes (tests/sip/calls.test.ts).
 */
export const sipTestPackages = ['baresip-core', 'strace'];

export const kamailioCandidates = () =>
  [process.env.KAMAILIO_BIN, '/usr/sbin/kamailio', '/usr/local/sbin/kamailio'].filter(Boolean);

/**
 * Telephony: Lintel's SIP server is Debian's Kamailio with its websocket, TLS and JSON-RPC modules, and the
 * SIP tests register with `sipp` (Debian's sip-tester). On Debian or Ubuntu as root they are installed with
 * apt-get (the package's own service is not started: Lintel runs Kamailio with its own configuration).
 * `required`: `npm test` needs them; `npm start` runs without telephony when they cannot be installed.
 */
export function ensureSip({ required = true } = {}) {
  const modules = [
    '/usr/lib/x86_64-linux-gnu/kamailio/modules',
    '/usr/lib/aarch64-linux-gnu/kamailio/modules',
  ];
  const has = () =>
    kamailioCandidates().some((p) => fs.existsSync(p)) &&
    (!process.env.KAMAILIO_BIN
      ? modules.some((d) =>
          ['websocket.so', 'jsonrpcs.so', 'http_client.so'].every((m) => fs.existsSync(path.join(d, m))),
        )
      : true) &&
    ['/usr/bin/sipp', '/usr/local/bin/sipp'].some((p) => fs.existsSync(p)) &&
    (!required ||
      (['/usr/bin/baresip', '/usr/local/bin/baresip'].some((p) => fs.existsSync(p)) &&
        ['/usr/bin/strace', '/usr/local/bin/strace'].some((p) => fs.existsSync(p))));
  if (has()) return true;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const debian = fs.existsSync('/etc/debian_version') && fs.existsSync('/usr/bin/apt-get');
  if (isRoot && debian) {
    console.log(
      `Installing the SIP server from Debian (apt-get install ${[...sipPackages, ...(required ? sipTestPackages : [])].join(' ')}; service not started)…`,
    );
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    const policy = '/usr/sbin/policy-rc.d';
    const hadPolicy = fs.existsSync(policy);
    if (!hadPolicy) fs.writeFileSync(policy, '#!/bin/sh\nexit 101\n', { mode: 0o755 });
    try {
      run('apt-get', ['update', '-qq'], { env });
      if (
        run(
          'apt-get',
          [
            'install',
            '-y',
            '-qq',
            '--no-install-recommends',
            ...sipPackages,
            ...(required ? sipTestPackages : []),
          ],
          { env },
        ) === 0 &&
        has()
      )
        return true;
    } finally {
      if (!hadPolicy) fs.rmSync(policy, { force: true });
    }
    if (required) fail('apt-get could not install the SIP server (see above).');
  }
  const advice =
    "Lintel's telephony runs Kamailio, and it was not found.\n" +
    `Install it (Debian/Ubuntu: \`sudo apt-get install ${sipPackages.join(' ')}\`;\n` +
    'elsewhere: Kamailio 5.6 or newer with its websocket, tls, jsonrpcs and http_client modules, and SIPp),\n' +
    'or point KAMAILIO_BIN at a kamailio binary.';
  if (required) fail(`${advice}\nThen run \`npm test\` again.`);
  console.warn(`\n  ${advice.split('\n').join('\n  ')}\n  The server starts without telephony.\n`);
  return false;
}
