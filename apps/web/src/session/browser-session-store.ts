import type { ProjectSession, SessionStore, StoredSession } from '@lintel/core';

/**
 * Spec part 1 §3 "Session" and part 2 §4: the tokens and the list of available projects live in
 * localStorage when remember-me was set (remember type `infinity`), otherwise in sessionStorage
 * (remember type `session`). The remember type itself is a browser setting kept in localStorage.
 */
export type RememberType = 'infinity' | 'session';

const KEY_SESSION = 'lintel.session';
const KEY_PROJECTS = 'lintel.projects';
const KEY_REMEMBER = 'lintel.remember';
/**
 * The refresh tokens this tab knows were replaced, kept beside its session so a reload of the tab still knows
 * them: a tab that refreshed, then reloaded, must still answer another tab that asks who replaced its token.
 */
const KEY_REPLACED = 'lintel.session.replaced';

/** What /choose-project offers: the sessions of the last login reply, one per project. */
export interface StoredProjects {
  login: string;
  sessions: ProjectSession[];
}

type Listener = () => void;

/**
 * What tabs of one browser tell each other on the channel: `rotated`, a tab's session tokens now, which
 * replaced the refresh token `from`; `ask`, a tab whose refresh token `from` was refused asks who replaced it.
 */
type Message = { type: 'rotated'; from: string; session: StoredSession } | { type: 'ask'; from: string };
const CHANNEL = 'lintel.session';
const REFRESH_LOCK = 'lintel.session.refresh';
/** How long a tab whose refresh was refused waits for the tab that refreshed first to hand its tokens over */
const SUCCESSOR_WAIT_MS = 5_000;

function storage(kind: RememberType): Storage | null {
  try {
    return kind === 'infinity' ? window.localStorage : window.sessionStorage;
  } catch {
    return null;
  }
}

/** An unparsable stored value is logged and read as empty (spec part 2 §8). */
function readJson<T>(key: string, guard: (v: unknown) => v is T): T | null {
  for (const kind of ['session', 'infinity'] as const) {
    const raw = storage(kind)?.getItem(key);
    if (!raw) continue;
    try {
      const value: unknown = JSON.parse(raw);
      if (guard(value)) return value;
      console.warn(`lintel: ignoring malformed ${key}`);
    } catch (err) {
      console.warn(`lintel: ignoring unparsable ${key}`, err);
    }
  }
  return null;
}

/** The replaced refresh tokens a reload of this tab left (KEY_REPLACED); none when unreadable. */
function readReplaced(): string[] {
  for (const kind of ['session', 'infinity'] as const) {
    try {
      const value: unknown = JSON.parse(storage(kind)?.getItem(KEY_REPLACED) ?? 'null');
      if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string').slice(-32);
    } catch {
      // unreadable: none known
    }
  }
  return [];
}

function isProject(v: unknown): boolean {
  if (!v || typeof v !== 'object') return false;
  const p = v as Record<string, unknown>;
  return typeof p.id === 'number' && typeof p.name === 'string';
}

function isStoredSession(v: unknown): v is StoredSession {
  if (!v || typeof v !== 'object') return false;
  const s = v as Record<string, unknown>;
  return typeof s.token === 'string' && typeof s.refresh === 'string' && isProject(s.project);
}

function isStoredProjects(v: unknown): v is StoredProjects {
  if (!v || typeof v !== 'object') return false;
  const p = v as Record<string, unknown>;
  return typeof p.login === 'string' && Array.isArray(p.sessions) && p.sessions.every(isStoredSession);
}

/**
 * Tabs of one browser share their session (issue 25, item 9): a refresh token is single-use, so two tabs
 * refreshing with the same one signed the user out (the second use revokes the session). Refreshes take the
 * Web Lock `lintel.session.refresh` one tab at a time, and a tab that rotated the tokens tells the others on
 * the BroadcastChannel `lintel.session`; a tab holding the old refresh token takes the new tokens. That
 * also serves tabs whose session is in sessionStorage (no remember-me), which other tabs cannot read.
 */
export class BrowserSessionStore implements SessionStore {
  private listeners = new Set<Listener>();
  private cache: { session: StoredSession | null; projects: StoredProjects | null } | null = null;
  private readonly channel: BroadcastChannel | null =
    typeof BroadcastChannel === 'function' ? new BroadcastChannel(CHANNEL) : null;
  /**
   * refresh tokens this tab knows were replaced (by itself or by another tab), the oldest first; kept in the
   * session's storage (KEY_REPLACED) so the tab still knows them after a reload
   */
  private readonly replaced = new Set<string>(readReplaced());
  private readonly waiting = new Map<string, Set<(s: StoredSession) => void>>();

  constructor() {
    // Another tab signing in or out with remember-me changes localStorage: follow it.
    window.addEventListener('storage', (e) => {
      if (e.key === null || e.key === KEY_SESSION || e.key === KEY_PROJECTS) {
        this.cache = null;
        this.emit();
      }
    });
    this.channel?.addEventListener('message', (e: MessageEvent<unknown>) => this.hear(e.data));
  }

  private hear(data: unknown): void {
    const m = data as Partial<Message> | null;
    if (!m || typeof m.from !== 'string') return;
    const mine = this.load().session;
    if (m.type === 'ask') {
      // a tab that reloaded before hearing of a rotation asks for it: this tab's tokens answer it
      if (mine && this.replaced.has(m.from) && mine.refresh !== m.from) this.tell(m.from, mine);
      return;
    }
    if (m.type !== 'rotated' || !isStoredSession(m.session)) return;
    this.noteReplaced(m.from);
    // this tab held the replaced tokens: it takes the new ones (and does not tell again)
    if (mine?.refresh === m.from) this.write(m.session, false);
    for (const wake of this.waiting.get(m.from) ?? []) wake(m.session);
  }

  private noteReplaced(replacedRefresh: string): void {
    this.replaced.add(replacedRefresh);
    if (this.replaced.size > 32) this.replaced.delete(this.replaced.values().next().value!);
    storage(this.remember)?.setItem(KEY_REPLACED, JSON.stringify([...this.replaced]));
  }

  private tell(from: string, session: StoredSession): void {
    this.channel?.postMessage({ type: 'rotated', from, session } satisfies Message);
  }

  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const locks = typeof navigator !== 'undefined' ? navigator.locks : undefined;
    const run = () => {
      // what another tab stored while this one waited
      this.cache = null;
      return fn();
    };
    return locks ? (locks.request(REFRESH_LOCK, run) as Promise<T>) : run();
  }

  successorOf(refresh: string): Promise<StoredSession | null> {
    const channel = this.channel;
    if (!channel) return Promise.resolve(null);
    return new Promise((resolve) => {
      const wakers = this.waiting.get(refresh) ?? new Set();
      this.waiting.set(refresh, wakers);
      const done = (s: StoredSession | null) => {
        clearTimeout(timer);
        wakers.delete(wake);
        if (wakers.size === 0) this.waiting.delete(refresh);
        resolve(s);
      };
      const wake = (s: StoredSession) => done(s);
      const timer = setTimeout(() => done(null), SUCCESSOR_WAIT_MS);
      wakers.add(wake);
      channel.postMessage({ type: 'ask', from: refresh } satisfies Message);
    });
  }

  get remember(): RememberType {
    return storage('infinity')?.getItem(KEY_REMEMBER) === 'infinity' ? 'infinity' : 'session';
  }

  /** Chosen on the login form; decides where the next session and project list are written. */
  setRemember(kind: RememberType): void {
    storage('infinity')?.setItem(KEY_REMEMBER, kind);
  }

  private load() {
    if (!this.cache) {
      this.cache = {
        session: readJson(KEY_SESSION, isStoredSession),
        projects: readJson(KEY_PROJECTS, isStoredProjects),
      };
    }
    return this.cache;
  }

  get(): StoredSession | null {
    return this.load().session;
  }

  /** Called on sign-in and on every token refresh (the refresh token rotates). */
  set(session: StoredSession): void {
    this.write(session, true);
  }

  private write(session: StoredSession, tell: boolean): void {
    const previous = this.load().session;
    const kind = this.remember;
    const other = kind === 'infinity' ? 'session' : 'infinity';
    storage(other)?.removeItem(KEY_SESSION);
    storage(kind)?.setItem(KEY_SESSION, JSON.stringify(session));
    const projects = this.load().projects;
    // Keep the project list's copy of this project's tokens current, so switching back works.
    if (projects) {
      const sessions = projects.sessions.map((s) =>
        s.project.id === session.project.id
          ? { token: session.token, refresh: session.refresh, project: s.project }
          : s,
      );
      this.writeProjects({ ...projects, sessions });
    }
    this.cache = { ...this.load(), session };
    if (previous && previous.refresh !== session.refresh && previous.project.id === session.project.id) {
      this.noteReplaced(previous.refresh);
      if (tell) this.tell(previous.refresh, session);
    }
    this.emit();
  }

  getProjects(): StoredProjects | null {
    return this.load().projects;
  }

  setProjects(projects: StoredProjects): void {
    this.writeProjects(projects);
    this.cache = { ...this.load(), projects };
    this.emit();
  }

  private writeProjects(projects: StoredProjects) {
    const kind = this.remember;
    storage(kind === 'infinity' ? 'session' : 'infinity')?.removeItem(KEY_PROJECTS);
    storage(kind)?.setItem(KEY_PROJECTS, JSON.stringify(projects));
  }

  /** Logout clears the tokens and the project list (spec part 2 §4). */
  clear(): void {
    for (const kind of ['session', 'infinity'] as const) {
      storage(kind)?.removeItem(KEY_SESSION);
      storage(kind)?.removeItem(KEY_PROJECTS);
      storage(kind)?.removeItem(KEY_REPLACED);
    }
    this.replaced.clear();
    this.cache = { session: null, projects: null };
    this.emit();
  }

  subscribe = (listener: Listener): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  private emit() {
    for (const l of this.listeners) l();
  }
}
