import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * Where a server started on this machine says its address, so that `lintel login` proposes the port it
 * really listens on (issue 25 item 10: it proposed http://localhost:8080 whatever PORT was). The file lives
 * beside the CLI's contexts (`$LINTEL_CONFIG_DIR`, else `$XDG_CONFIG_HOME/lintel`, else `~/.config/lintel`)
 * and names the process, so a stale file of a server that has stopped is ignored.
 */
export function localServerFile(env: NodeJS.ProcessEnv): string {
  const dir =
    env.LINTEL_CONFIG_DIR || path.join(env.XDG_CONFIG_HOME || path.join(os.homedir(), '.config'), 'lintel');
  return path.join(dir, 'local-server.json');
}

/** Says where this server listens; best effort (a read-only home only loses the suggestion). */
export function announceLocalServer(env: NodeJS.ProcessEnv, url: string): () => void {
  const file = localServerFile(env);
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    fs.writeFileSync(file, JSON.stringify({ url, pid: process.pid }) + '\n', { mode: 0o600 });
  } catch {
    return () => undefined;
  }
  return () => {
    try {
      const held = JSON.parse(fs.readFileSync(file, 'utf8')) as { pid?: number };
      if (held.pid === process.pid) fs.rmSync(file, { force: true });
    } catch {
      // gone or rewritten by another server: leave it
    }
  };
}
