import path from 'node:path';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createServer } from './server';
import { loadConfig } from './config';
import { busyPorts } from './ports';
import { announceLocalServer } from './local-server';

/** The built console beside the server: apps/web/dist, found from this file's place in the repository. */
function defaultWebDir(): string | undefined {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    const candidate = path.join(dir, 'apps', 'web', 'dist');
    if (fs.existsSync(path.join(candidate, 'index.html'))) return candidate;
    dir = path.dirname(dir);
  }
  return undefined;
}

const config = loadConfig();
if (!config.webDir) config.webDir = defaultWebDir();
// the ports are checked before anything is created: a first start that could not listen would otherwise make
// the administrator and die before saying the password (issue 25, item 1)
const busy = await busyPorts([
  { port: config.port, host: config.host, name: 'PORT' },
  ...(config.mqtt.url ? [] : [{ port: config.mqtt.port, host: config.mqtt.host, name: 'MQTT_PORT' }]),
]);
if (busy.length > 0) {
  for (const b of busy) process.stderr.write(`  port ${b.port} is in use: set ${b.name}\n`);
  process.exit(1);
}
const server = await createServer(config);
try {
  const address = await server.listen();
  // PORT=0 lets the system choose: the default public address names the port it chose, not 0
  if (!process.env.LINTEL_PUBLIC_URL && config.port === 0)
    config.publicUrl = `http://localhost:${new URL(address).port}`;
} catch (e) {
  // another program took the port between the check and now: one line, the password still said below
  const err = e as NodeJS.ErrnoException;
  if (err.code !== 'EADDRINUSE') throw e;
  process.stderr.write(`  ${err.message.replace(/^listen /, '')}: a port is in use (PORT, MQTT_PORT)\n`);
  if (server.generatedAdminPassword)
    process.stderr.write(
      '  The administrator was not signed in yet: the next start prints a new password.\n',
    );
  await server.close().catch(() => undefined);
  process.exit(1);
}
const lines = [
  '',
  `  Lintel is running at ${config.publicUrl}`,
  `  Storage: ${server.context.database.kind === 'postgres' ? 'PostgreSQL (DATABASE_URL)' : `PGlite in ${config.dataDir}`}`,
];
if (!config.webDir) lines.push('  The console is not built: run `npm run build` to serve it.');
if (server.generatedAdminPassword) {
  lines.push(
    '',
    server.firstStart
      ? `  First start: sign in as "${config.adminLogin}" with the password`
      : `  "${config.adminLogin}" has not signed in since the first start; a new password for the first sign-in:`,
    '',
    `      ${server.generatedAdminPassword}`,
    '',
    '  A new one is made at each start until the first sign-in. Change it in the profile after signing in.',
  );
}
// the terminal, not the log: the password must never reach a log file
process.stdout.write(lines.join('\n') + '\n\n');
const withdraw = announceLocalServer(process.env, config.publicUrl);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    withdraw();
    void server.close().then(() => process.exit(0));
  });
}
