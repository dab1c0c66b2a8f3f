import path from 'node:path';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createServer } from './server';
import { loadConfig } from './config';

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
const server = await createServer(config);
await server.listen();
const lines = [
  '',
  `  Lintel is running at ${config.publicUrl}`,
  `  Storage: ${server.context.database.kind === 'postgres' ? 'PostgreSQL (DATABASE_URL)' : `PGlite in ${config.dataDir}`}`,
];
if (!config.webDir) lines.push('  The console is not built: run `npm run build` to serve it.');
if (server.generatedAdminPassword) {
  lines.push(
    '',
    `  First start: sign in as "${config.adminLogin}" with the password`,
    '',
    `      ${server.generatedAdminPassword}`,
    '',
    '  It is shown this once. Change it in the profile after signing in.',
  );
}
// the terminal, not the log: the password must never reach a log file
process.stdout.write(lines.join('\n') + '\n\n');

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void server.close().then(() => process.exit(0));
  });
}
