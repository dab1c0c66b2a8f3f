import type { CliContext } from '../context';
import { t } from '../i18n';

/** Where a long import or export is. */
export interface ProgressState {
  phase: 'reading' | 'committing' | 'exporting';
  rows: number;
  invalid: number;
  /** 0..1, or null while unknown */
  fraction: number | null;
  /** a dry run's last phase checks the rows and writes nothing: it says "checking", not "committing" */
  dryRun?: boolean;
  /** no row will be written (every row was rejected, or some were and the import stops on them) */
  nothing?: boolean;
}

/**
 * The last phase of an import, from what the server staged: it commits the good rows, or — when every row
 * was rejected, or some were and the import does not continue past them — writes nothing and says so
 * ("committing 0 rows" read as if something were being written).
 */
export function commitPhase(
  staged: { rows: number; invalid: number },
  opts: { dryRun?: boolean; continueOnError?: boolean },
): Partial<ProgressState> {
  const good = Math.max(0, staged.rows - staged.invalid);
  const nothing = good === 0 || (staged.invalid > 0 && !opts.continueOnError);
  return {
    phase: 'committing',
    rows: nothing ? staged.rows : good,
    invalid: staged.invalid,
    fraction: 1,
    dryRun: Boolean(opts.dryRun),
    nothing: !opts.dryRun && nothing,
  };
}

export interface Progress {
  update(change: Partial<ProgressState>): void;
  /** stops the view; the last state stays on screen */
  finish(): Promise<void>;
}

const fmt = (n: number) => Math.round(n).toLocaleString('en');

function clock(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '--:--';
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const pad = (n: number) => String(n).padStart(2, '0');
  return h ? `${h}:${pad(m)}:${pad(s % 60)}` : `${m}:${pad(s % 60)}`;
}

/** Rows per second and the time left, from what is done so far. */
export function rates(
  state: ProgressState,
  elapsedMs: number,
): { perSecond: number; etaSeconds: number | null } {
  const seconds = Math.max(elapsedMs / 1000, 0.001);
  const perSecond = state.rows / seconds;
  const f = state.fraction;
  const etaSeconds = f && f > 0 && f < 1 ? (seconds * (1 - f)) / f : f === 1 ? 0 : null;
  return { perSecond, etaSeconds };
}

/** What is done, how fast, and what is left: `52,000 rows · 8,400 rows/s · 0:06 left · 12 invalid`. */
export function progressDetails(state: ProgressState, elapsedMs: number): string {
  const { perSecond, etaSeconds } = rates(state, elapsedMs);
  if (state.phase === 'committing')
    return t(
      state.dryRun
        ? 'bulk.progress.checking'
        : state.nothing
          ? 'bulk.progress.nothing'
          : 'bulk.progress.committing',
      { rows: fmt(state.rows), invalid: fmt(state.invalid), elapsed: clock(elapsedMs / 1000) },
    );
  const parts = [
    t('bulk.progress.rows', { rows: fmt(state.rows) }),
    t('bulk.progress.rate', { rate: fmt(perSecond) }),
    etaSeconds === null ? '' : t('bulk.progress.eta', { eta: clock(etaSeconds) }),
    state.invalid ? t('bulk.progress.invalid', { count: fmt(state.invalid) }) : '',
  ];
  return parts.filter(Boolean).join(' · ');
}

const percent = (state: ProgressState) =>
  state.fraction === null ? '' : `${Math.floor(state.fraction * 100)}%`;

/** One line for a log: `52% · 52,000 rows · 8,400 rows/s · 0:06 left · 12 invalid`. */
export function progressLine(state: ProgressState, elapsedMs: number): string {
  const pct = state.phase === 'committing' ? '' : percent(state);
  return [pct, progressDetails(state, elapsedMs)].filter(Boolean).join(' · ');
}

const width = (s: string) => [...s].length;
const cut = (s: string, w: number) =>
  width(s) <= w ? s : `${[...s].slice(0, Math.max(0, w - 1)).join('')}…`;

/**
 * The bar's two lines, fitted to `columns` so the terminal never wraps them (a wrapped line would leave
 * copies behind as the bar redraws): the file and the bar with its percentage, then the figures.
 */
export function progressLines(
  label: string,
  state: ProgressState,
  elapsedMs: number,
  columns: number,
): { name: string; bar: { filled: number; empty: number }; pct: string; details: string } {
  const cols = Math.max(20, columns);
  const name = cut(label, Math.max(8, Math.floor(cols * 0.35)));
  const pct = state.phase === 'committing' ? '100%' : percent(state).padStart(4);
  const room = Math.max(5, Math.min(40, cols - width(name) - 2 - 1 - width(pct) - 1));
  const fraction = state.phase === 'committing' ? 1 : Math.min(1, state.fraction ?? 0);
  const filled = Math.round(fraction * room);
  return {
    name,
    bar: { filled, empty: room - filled },
    pct,
    details: cut(progressDetails(state, elapsedMs), cols - 1),
  };
}

/** A bar drawn by ink on stderr, redrawn at most ten times a second. ink and React load only here. */
async function inkProgress(
  ctx: CliContext,
  label: string,
  state: ProgressState,
  started: number,
): Promise<Progress> {
  const [ink, React] = await Promise.all([import('ink'), import('react')]);
  const h = React.createElement;
  const View = ({ s, ms }: { s: ProgressState; ms: number }) => {
    const p = progressLines(label, s, ms, ctx.stderr.columns || 80);
    return h(
      ink.Box,
      { flexDirection: 'column' },
      h(
        ink.Text,
        { wrap: 'truncate-end' },
        `${p.name}  `,
        h(ink.Text, { color: 'cyan' }, `${'█'.repeat(p.bar.filled)}${'░'.repeat(p.bar.empty)}`),
        ` ${p.pct}`,
      ),
      h(ink.Text, { dimColor: true, wrap: 'truncate-end' }, p.details),
    );
  };
  const instance = ink.render(h(View, { s: { ...state }, ms: 0 }), {
    stdout: ctx.stderr,
    stdin: ctx.stdin,
    exitOnCtrlC: false,
    patchConsole: false,
    maxFps: 10,
  });
  const draw = () => instance.rerender(h(View, { s: { ...state }, ms: Date.now() - started }));
  const timer = setInterval(draw, 100);
  let finished = false;
  return {
    update: (change) => Object.assign(state, change),
    async finish() {
      if (finished) return;
      finished = true;
      clearInterval(timer);
      draw();
      instance.unmount();
      await instance.waitUntilExit();
    },
  };
}

/** Without a terminal: a line per 10 % on stderr (and one when committing starts). */
function lineProgress(ctx: CliContext, label: string, state: ProgressState, started: number): Progress {
  let shown = -1;
  let committing = false;
  return {
    update(change) {
      Object.assign(state, change);
      const ms = Date.now() - started;
      if (state.phase === 'committing') {
        if (!committing) ctx.stderr.write(`${label}: ${progressLine(state, ms)}\n`);
        committing = true;
        return;
      }
      const step = state.fraction === null ? -1 : Math.floor(state.fraction * 10);
      if (step > shown) {
        shown = step;
        ctx.stderr.write(`${label}: ${progressLine(state, ms)}\n`);
      }
    },
    async finish() {},
  };
}

const silent: Progress = { update: () => undefined, finish: async () => undefined };

/**
 * The progress of an import or export: a bar at a terminal (stderr), lines per 10 % in a log when `lines`,
 * else nothing.
 */
export async function createProgress(
  ctx: CliContext,
  label: string,
  opts: { lines: boolean; phase: ProgressState['phase'] },
): Promise<Progress> {
  const state: ProgressState = { phase: opts.phase, rows: 0, invalid: 0, fraction: 0 };
  const started = Date.now();
  if (ctx.stderr.isTTY) return inkProgress(ctx, label, state, started);
  if (opts.lines) return lineProgress(ctx, label, state, started);
  return silent;
}
