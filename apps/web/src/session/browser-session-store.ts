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

/** What /choose-project offers: the sessions of the last login reply, one per project. */
export interface StoredProjects {
  login: string;
  sessions: ProjectSession[];
}

type Listener = () => void;

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

export class BrowserSessionStore implements SessionStore {
  private listeners = new Set<Listener>();
  private cache: { session: StoredSession | null; projects: StoredProjects | null } | null = null;

  constructor() {
    // Another tab signing in or out with remember-me changes localStorage: follow it.
    window.addEventListener('storage', (e) => {
      if (e.key === null || e.key === KEY_SESSION || e.key === KEY_PROJECTS) {
        this.cache = null;
        this.emit();
      }
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
    }
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
