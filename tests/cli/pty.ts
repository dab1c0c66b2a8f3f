import { spawn } from 'node:child_process';
import { bin } from './support';

/** Escape sequences out, so the screen's text can be searched. */
export const plain = (s: string) =>
  s
    // eslint-disable-next-line no-control-regex
    .replace(/\x1b\[[0-9;?<>=]*[ -/]*[@-~]/g, '')
    // eslint-disable-next-line no-control-regex
    .replace(/\x1b[()][0-9A-Za-z]|\x1b[=>78]/g, '');

/** How long a screen may take to show what a test waits for. */
const WAIT_MS = 20_000;

export interface Terminal {
  /** everything the program wrote, escape sequences removed */
  output(): string;
  /** types keys (raw bytes: `\r` is Enter, `\x1b` Esc, `\x03` Ctrl+C) */
  type(keys: string): void;
  /** waits until the text written after the last `type` (or the start) contains `text` */
  waitFor(text: string | RegExp): Promise<string>;
  /** the exit code of the CLI */
  exited: Promise<number | null>;
  /** ends it (a test that failed half way) */
  kill(): void;
}

/**
 * Runs the built CLI in a pseudo-terminal of 80×24 (util-linux `script`), as a person at a terminal would:
 * stdin and stdout are a TTY, and CI is not set (ink and the palette both look at it).
 */
export function terminal(
  args: string[],
  opts: { configDir: string; env?: Record<string, string> },
): Terminal {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    LINTEL_CONFIG_DIR: opts.configDir,
    TERM: 'xterm-256color',
    ...opts.env,
  };
  for (const key of ['CI', 'CONTINUOUS_INTEGRATION', 'LINTEL_TOKEN', 'LINTEL_SERVER', 'LINTEL_LANG'])
    if (!opts.env?.[key]) delete env[key];
  const quoted = [process.execPath, bin, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const child = spawn(
    'script',
    ['-q', '-f', '-e', '-c', `stty rows 24 cols 80; exec ${quoted}`, '/dev/null'],
    {
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  let text = '';
  let mark = 0;
  let waiters: Array<() => void> = [];
  const onData = (d: Buffer) => {
    text += d.toString('utf8');
    for (const w of waiters) w();
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const exited = new Promise<number | null>((resolve) => {
    child.on('close', (code) => {
      for (const w of waiters) w();
      resolve(code);
    });
  });
  return {
    output: () => plain(text),
    type(keys) {
      mark = text.length;
      child.stdin.write(keys);
    },
    waitFor(wanted) {
      const from = mark;
      return new Promise((resolve, reject) => {
        const done = (settle: () => void) => {
          waiters = waiters.filter((w) => w !== check);
          clearTimeout(timer);
          settle();
        };
        const check = () => {
          const seen = plain(text.slice(from));
          if (typeof wanted === 'string' ? seen.includes(wanted) : wanted.test(seen))
            done(() => resolve(seen));
          else if (child.exitCode !== null)
            done(() =>
              reject(
                new Error(`the CLI exited (${child.exitCode}) without showing ${String(wanted)}:\n${seen}`),
              ),
            );
        };
        // a screen that never shows it fails with what it did show, before the test's own timeout
        const timer = setTimeout(
          () =>
            done(() =>
              reject(
                new Error(
                  `the screen did not show ${String(wanted)} in ${WAIT_MS} ms:\n${plain(text.slice(from))}`,
                ),
              ),
            ),
          WAIT_MS,
        );
        waiters.push(check);
        check();
      });
    },
    exited,
    kill: () => {
      if (child.exitCode === null) child.kill();
    },
  };
}
