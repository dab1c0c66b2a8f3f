/**
 * The server's long-lived parts. Each is a module: its name, the modules it needs, how it starts and how it
 * stops. The composition root (`server.ts`) lists them in their start order; they stop in reverse. An
 * instance runs the ones its configuration names (LINTEL_MODULES), so one machine may serve HTTP while
 * another only runs jobs; a module named without one it needs is refused before anything starts.
 */
export interface ServerModule {
  name: string;
  /** modules that must run with this one (each listed, so started, before it) */
  needs?: readonly string[];
  start(): Promise<void>;
  /** finishes in-flight work (bounded) before it returns */
  stop(): Promise<void>;
}

/** A module, declared: the identity function that types it. */
export function defineModule(m: ServerModule): ServerModule {
  return m;
}

/**
 * The modules an instance runs, in start order: those of `all` (already in start order) that `chosen` names.
 * An unknown name, or a module chosen without a module it needs, is an error that names the fix.
 */
export function chooseModules(all: readonly ServerModule[], chosen: readonly string[]): ServerModule[] {
  const known = new Set(all.map((m) => m.name));
  const unknown = chosen.filter((n) => !known.has(n));
  if (unknown.length)
    throw new Error(`unknown server modules: ${unknown.join(', ')} (known: ${[...known].join(', ')})`);
  const picked = all.filter((m) => chosen.includes(m.name));
  for (const m of picked)
    for (const need of m.needs ?? [])
      if (!chosen.includes(need))
        throw new Error(`the ${m.name} module needs the ${need} module: add ${need} to LINTEL_MODULES`);
  return picked;
}

export class Lifecycle {
  private readonly started: ServerModule[] = [];

  /**
   * `stopBoundMs`: how long the whole stops waits for one module before it goes on without it. A module's
   * work may wait on something that will never answer — a statement whose connection the network dropped
   * silently waits until the database is closed, which comes after the modules —, so its own bound is not
   * enough: the lifecycle holds every module to this one.
   */
  constructor(
    private readonly modules: readonly ServerModule[],
    private readonly opts: { stopBoundMs?: number } = {},
  ) {}

  async start(): Promise<void> {
    for (const m of this.modules) {
      if (this.started.includes(m)) continue;
      await m.start();
      this.started.push(m);
    }
  }

  /** The modules this instance was configured with, in start order. */
  get configured(): readonly ServerModule[] {
    return this.modules;
  }

  /** Whether a module runs now. */
  isRunning(name: string): boolean {
    return this.started.some((m) => m.name === name);
  }

  /**
   * Starts one configured module that was stopped (the workers' start): it goes back to its place in the
   * start order, so the whole stops in reverse as before. A module whose needs are not running is refused.
   */
  async startOne(name: string): Promise<void> {
    const m = this.modules.find((x) => x.name === name);
    if (!m) throw new Error(`the module ${name} is not configured on this instance`);
    if (this.isRunning(name)) return;
    const missing = (m.needs ?? []).filter((n) => !this.isRunning(n));
    if (missing.length) throw new ModuleRefused('needs', missing);
    await m.start();
    this.started.push(m);
    this.started.sort((a, b) => this.modules.indexOf(a) - this.modules.indexOf(b));
  }

  /** Stops one running module (the workers' stop); one that a running module needs is refused. */
  async stopOne(name: string): Promise<void> {
    const m = this.started.find((x) => x.name === name);
    if (!m) return;
    const by = this.started.filter((x) => x.needs?.includes(name)).map((x) => x.name);
    if (by.length) throw new ModuleRefused('needed_by', by);
    this.started.splice(this.started.indexOf(m), 1);
    await m.stop();
  }

  /**
   * Stops what started, last first; a module failing to stop, or not stopped within `stopBoundMs`, does not
   * keep the others running (`onError` hears of it: a `ModuleStopTimeout` for the latter).
   */
  async stop(onError: (name: string, err: unknown) => void): Promise<void> {
    const bound = this.opts.stopBoundMs ?? MODULE_STOP_BOUND_MS;
    while (this.started.length) {
      const m = this.started.pop()!;
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          m.stop(),
          new Promise((_, reject) => (timer = setTimeout(() => reject(new ModuleStopTimeout(bound)), bound))),
        ]);
      } catch (err) {
        onError(m.name, err);
      } finally {
        clearTimeout(timer);
      }
    }
  }
}

/** A start or stop the modules' needs forbid: `needs` (these must run first) or `needed_by` (these run on it). */
export class ModuleRefused extends Error {
  constructor(
    readonly reason: 'needs' | 'needed_by',
    readonly modules: string[],
  ) {
    super(`${reason}: ${modules.join(', ')}`);
  }
}

/** A module's stop that did not end within the lifecycle's bound: the stop goes on without it. */
export class ModuleStopTimeout extends Error {
  constructor(readonly ms: number) {
    super(`did not stop within ${ms} ms`);
  }
}

/** a module's stop waits at most this long (the jobs wait 10 s for their own, so a little more) */
const MODULE_STOP_BOUND_MS = 15_000;
