import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { ProjectRef, type SessionStore } from '@lintel/core';
import { CliError } from './errors';
import { ExitCode } from './exit-codes';

/**
 * One signed-in place: a server, the login and the project session on it. Without tokens the context is
 * signed out (the session ended) but still remembers where to sign in again.
 */
const Context = z.looseObject({
  server: z.string(),
  login: z.string(),
  project: ProjectRef,
  token: z.string().optional(),
  refresh: z.string().optional(),
});
export type Context = z.infer<typeof Context>;

/** Loose objects, so a file written by a newer CLI keeps the fields this one does not know. */
const ConfigFile = z.looseObject({
  current: z.string().nullable().default(null),
  contexts: z.record(z.string(), Context).default({}),
});
export type ConfigFile = z.infer<typeof ConfigFile>;

/** `$LINTEL_CONFIG_DIR`, else `$XDG_CONFIG_HOME/lintel`, else `~/.config/lintel`. */
export function configDir(env: NodeJS.ProcessEnv): string {
  if (env.LINTEL_CONFIG_DIR) return env.LINTEL_CONFIG_DIR;
  return path.join(env.XDG_CONFIG_HOME || path.join(os.homedir(), '.config'), 'lintel');
}

/** `<project uid>@<host:port>`, e.g. `default@localhost:8080`. */
export function contextName(server: string, projectUid: string): string {
  return `${projectUid}@${new URL(server).host}`;
}

/**
 * The CLI's settings file, `config.json` (mode 0600, folder 0700): named contexts and the current one.
 * Every read goes to the disk, so a token rotated by another `lintel` process is seen at once.
 */
export class ConfigStore {
  readonly file: string;

  constructor(env: NodeJS.ProcessEnv) {
    this.file = path.join(configDir(env), 'config.json');
  }

  read(): ConfigFile {
    let text: string;
    try {
      text = fs.readFileSync(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { current: null, contexts: {} };
      throw this.unreadable(err);
    }
    try {
      return ConfigFile.parse(JSON.parse(text));
    } catch (err) {
      throw this.unreadable(err);
    }
  }

  /** Writes a temporary file and renames it over the old one, so a crash never leaves half a file. */
  write(config: ConfigFile): void {
    fs.mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
    const tmp = `${this.file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
    fs.renameSync(tmp, this.file);
  }

  update(change: (config: ConfigFile) => void): void {
    const config = this.read();
    change(config);
    this.write(config);
  }

  current(): { name: string; context: Context } | null {
    const config = this.read();
    const context = config.current ? config.contexts[config.current] : undefined;
    return config.current && context ? { name: config.current, context } : null;
  }

  /** Saves a context and makes it the current one. */
  save(name: string, context: Context): void {
    this.update((config) => {
      config.contexts[name] = context;
      config.current = name;
    });
  }

  remove(name: string): void {
    this.update((config) => {
      delete config.contexts[name];
      if (config.current === name) config.current = null;
    });
  }

  /** The session of one context, for ApiClient: a refresh rotates the tokens in the file. */
  sessionStore(name: string): SessionStore {
    return {
      get: () => {
        const c = this.read().contexts[name];
        return c?.token && c.refresh
          ? { token: c.token, refresh: c.refresh, project: c.project, server: c.server, login: c.login }
          : null;
      },
      set: (session) =>
        this.update((config) => {
          const c = config.contexts[name];
          if (c) Object.assign(c, { token: session.token, refresh: session.refresh });
        }),
      clear: () =>
        this.update((config) => {
          const c = config.contexts[name];
          if (c) {
            delete c.token;
            delete c.refresh;
          }
        }),
    };
  }

  private unreadable(err: unknown): CliError {
    return new CliError('config_unreadable', ExitCode.error, {
      file: this.file,
      detail: String((err as Error)?.message ?? err),
    });
  }
}
