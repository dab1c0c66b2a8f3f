import type { Key } from 'ink';
import type { CliContext } from '../context';
import { t } from '../i18n';
import { valuesOf } from '../meta';
import { searchTexts, type Entry } from './entries';
import { rank } from './fuzzy';

/** What the palette ends with: a command line to run, or nothing (Esc, or Ctrl+C). */
export type PaletteResult = { kind: 'run'; argv: string[] } | { kind: 'quit' } | { kind: 'interrupt' };

/** The command line the answers make: positional values in order, then `--flag value` pairs. */
export function argvOf(entry: Entry, values: readonly string[]): string[] {
  const positional: string[] = [];
  const flags: string[] = [];
  entry.asks.forEach((ask, i) => {
    const v = values[i] ?? '';
    if (ask.flag) flags.push(ask.flag, v);
    else positional.push(v);
  });
  return [...entry.words, ...positional, ...flags];
}

/** A command line as a person would type it: words with spaces or quotes in single quotes. */
export function shellLine(argv: readonly string[]): string {
  return ['lintel', ...argv]
    .map((a) => (a === '' || /[^\w@%+=:,./-]/.test(a) ? `'${a.replace(/'/g, `'\\''`)}'` : a))
    .join(' ');
}

const width = (s: string) => [...s].length;

const capital = (s: string) => s.charAt(0).toLocaleUpperCase() + s.slice(1);

const ALT_SCREEN_ON = '\x1b[?1049h\x1b[H';
const ALT_SCREEN_OFF = '\x1b[?1049l';

/** Printable text (no control characters): what typing adds to a box. */
const printable = (s: string) => s.length > 0 && [...s].every((c) => c.charCodeAt(0) >= 0x20 && c !== '\x7f');

/** Cut to `w` columns with `…`, or pad to them. */
function fit(s: string, w: number): string {
  const chars = [...s];
  if (chars.length <= w) return s + ' '.repeat(Math.max(0, w - chars.length));
  return w <= 1 ? chars.slice(0, Math.max(0, w)).join('') : `${chars.slice(0, w - 1).join('')}…`;
}

interface State {
  query: string;
  selected: number;
  /** where j and k go: to the list (move) or the search box (type) */
  focus: 'search' | 'list';
  asking: Asking | null;
  closing: boolean;
  /** the terminal is in raw mode: keys typed now are read */
  ready: boolean;
}

interface Asking {
  entry: Entry;
  step: number;
  values: string[];
  text: string;
  choice: number;
  problem: string | null;
}

/**
 * The interactive palette (`lintel` alone at a terminal), drawn by ink: a search box over every command the
 * user may run, then the command's required arguments one at a time. ink and React load only here.
 */
export async function openPalette(
  ctx: CliContext,
  entries: readonly Entry[],
  header: { title: string; detail: string },
): Promise<PaletteResult> {
  const [ink, React] = await Promise.all([import('ink'), import('react')]);
  const h = React.createElement;
  const { Box, Text } = ink;
  let result: PaletteResult = { kind: 'quit' };

  const columns = () => Math.max(40, ctx.stdout.columns || 80);
  const rows = () => Math.max(10, ctx.stdout.rows || 24);
  const rule = () => h(Text, { dimColor: true }, '─'.repeat(columns()));
  const line = (text: string, props: Record<string, unknown> = {}) =>
    h(Text, { wrap: 'truncate-end', ...props }, text);

  const Header = () =>
    h(
      Box,
      null,
      h(Text, { bold: true }, header.title),
      h(Text, { dimColor: true, wrap: 'truncate-end' }, ` · ${header.detail}`),
    );

  /** The matches of a query, kept for the last one (the key handler and the view both ask). */
  let ranked: { query: string; list: Entry[] } = { query: '', list: [...entries] };
  const matches = (query: string) => {
    if (ranked.query !== query) ranked = { query, list: rank(entries, query, searchTexts) };
    return ranked.list;
  };

  function App() {
    const { exit } = ink.useApp();
    // one state object read by the key handler at the time of the key: a key that comes before React has
    // re-subscribed the handler of the last render still sees what the screen shows
    const store = React.useRef<State>({
      query: '',
      selected: 0,
      focus: 'search',
      asking: null,
      closing: false,
      ready: false,
    });
    const [, redraw] = React.useReducer((n: number) => n + 1, 0);
    const set = (change: Partial<State>) => {
      Object.assign(store.current, change);
      redraw();
    };
    const setAsking = (asking: Asking | null) => set({ asking });
    const selectedOf = (st: State) => Math.min(st.selected, Math.max(0, matches(st.query).length - 1));

    // the palette draws nothing before it goes, so the command's output takes its place on the screen
    React.useEffect(() => {
      if (store.current.closing) exit();
    });
    const finish = (r: PaletteResult) => {
      result = r;
      set({ closing: true });
    };
    const choose = (entry: Entry) => {
      if (!entry.asks.length) return finish({ kind: 'run', argv: argvOf(entry, []) });
      setAsking({ entry, step: 0, values: [], text: '', choice: 0, problem: null });
    };
    const move = (by: number) => {
      const list = matches(store.current.query);
      if (!list.length) return;
      set({ focus: 'list', selected: (selectedOf(store.current) + by + list.length) % list.length });
    };
    const edit = (query: string) => set({ query, selected: 0, focus: 'search' });

    ink.useInput((input, key) => {
      const st = store.current;
      if (st.closing) return;
      if (key.ctrl && input === 'c') return finish({ kind: 'interrupt' });
      if (st.asking) return answer(st.asking, input, key);
      if (key.escape) return finish({ kind: 'quit' });
      const list = matches(st.query);
      const current = selectedOf(st);
      if (key.return || input === '\n' || input === '\r') {
        const entry = list[current];
        if (entry) choose(entry);
        return;
      }
      const page = Math.max(1, rows() - 7);
      if (key.upArrow || (key.ctrl && input === 'p') || (st.focus === 'list' && input === 'k'))
        return move(-1);
      if (key.downArrow || key.tab || (key.ctrl && input === 'n') || (st.focus === 'list' && input === 'j'))
        return move(1);
      if (key.pageUp) return set({ selected: Math.max(0, current - page) });
      if (key.pageDown) return set({ selected: Math.min(list.length - 1, current + page) });
      if (key.backspace || key.delete) return edit([...st.query].slice(0, -1).join(''));
      if (key.ctrl && input === 'u') return edit('');
      if (st.focus === 'list' && input === '/') return set({ focus: 'search' });
      if (!key.ctrl && !key.meta && printable(input)) edit(st.query + input);
    });

    // after useInput's own effect: the terminal is in raw mode now, and the key line says so
    React.useEffect(() => set({ ready: true }), []);

    function answer(a: Asking, input: string, key: Key) {
      const ask = a.entry.asks[a.step]!;
      const choices = ask.choices ? valuesOf({ values: ask.choices }) : null;
      if (key.escape) {
        // back: to the previous question, or to the list
        if (a.step === 0) return setAsking(null);
        const values = a.values.slice(0, -1);
        return setAsking({ ...a, step: a.step - 1, values, text: a.values[a.step - 1] ?? '', problem: null });
      }
      if (key.return || input === '\n' || input === '\r') {
        const value = choices ? (choices[a.choice] ?? '') : a.text.trim();
        if (!value) return setAsking({ ...a, problem: t('interactive.required') });
        const values = [...a.values, value];
        if (a.step + 1 >= a.entry.asks.length) return finish({ kind: 'run', argv: argvOf(a.entry, values) });
        return setAsking({ ...a, step: a.step + 1, values, text: '', choice: 0, problem: null });
      }
      if (choices) {
        const n = choices.length;
        if (!n) return;
        if (key.upArrow || input === 'k' || (key.ctrl && input === 'p'))
          return setAsking({ ...a, choice: (a.choice - 1 + n) % n });
        if (key.downArrow || key.tab || input === 'j' || (key.ctrl && input === 'n'))
          return setAsking({ ...a, choice: (a.choice + 1) % n });
        return;
      }
      if (key.backspace || key.delete)
        return setAsking({ ...a, text: [...a.text].slice(0, -1).join(''), problem: null });
      if (key.ctrl && input === 'u') return setAsking({ ...a, text: '', problem: null });
      if (!key.ctrl && !key.meta && printable(input))
        setAsking({ ...a, text: a.text + input, problem: null });
    }

    const { query, focus, asking, closing, ready } = store.current;
    const shown = matches(query);
    const current = selectedOf(store.current);
    const w = columns();
    if (closing) return null;
    if (asking) return h(AskView, { a: asking, w });

    // the list: a window of rows that keeps the selected one in sight
    const room = Math.max(3, rows() - 6);
    const top = Math.min(Math.max(0, current - room + 1), Math.max(0, shown.length - room));
    const visible = shown.slice(top, top + room);
    const wordsWidth = Math.min(
      Math.max(0, ...visible.map((e) => width(e.words.join(' ')))),
      Math.floor(w * 0.4),
    );
    const titleWidth = w - 2 - 2 - wordsWidth - 1;
    return h(
      Box,
      { flexDirection: 'column' },
      h(Header),
      h(
        Box,
        null,
        h(Text, { color: 'cyan' }, '› '),
        query ? h(Text, null, query) : null,
        focus === 'search' ? h(Text, { inverse: true }, ' ') : null,
        query ? null : h(Text, { dimColor: true }, ` ${t('interactive.placeholder')}`),
      ),
      rule(),
      ...(visible.length
        ? visible.map((e, i) => {
            const on = top + i === current;
            const words = fit(e.words.join(' '), wordsWidth);
            return h(
              Box,
              { key: e.words.join(' ') },
              h(
                Text,
                { color: on ? 'cyan' : undefined, bold: on },
                `${on ? '❯' : ' '} ${fit(e.title, titleWidth)}  `,
              ),
              h(Text, { color: on ? 'cyan' : undefined, dimColor: !on }, words),
            );
          })
        : [line(t('interactive.nothing'), { dimColor: true })]),
      rule(),
      line(
        ready
          ? `${t('interactive.count', { shown: shown.length, total: entries.length })} · ${t('interactive.keys_list')}`
          : '',
        { dimColor: true },
      ),
    );
  }

  function AskView({ a, w }: { a: Asking; w: number }) {
    const ask = a.entry.asks[a.step]!;
    const choices = ask.choices ? valuesOf({ values: ask.choices }) : null;
    const done = a.entry.asks
      .slice(0, a.step)
      .map((q, i) =>
        h(
          Box,
          { key: `done-${i}` },
          h(Text, { dimColor: true }, `  ${capital(q.label)}: `),
          h(Text, { wrap: 'truncate-end' }, a.values[i] ?? ''),
        ),
      );
    const room = Math.max(3, rows() - 9 - a.step);
    const top = choices ? Math.min(Math.max(0, a.choice - room + 1), Math.max(0, choices.length - room)) : 0;
    const last = a.step + 1 >= a.entry.asks.length;
    // the command line so far, as it would be typed
    const now = choices ? (choices[a.choice] ?? '') : a.text.trim();
    const answered = now ? a.step + 1 : a.step;
    const preview = shellLine(
      argvOf({ ...a.entry, asks: a.entry.asks.slice(0, answered) }, [...a.values, now]),
    );
    return h(
      Box,
      { flexDirection: 'column' },
      h(Header),
      line(a.entry.title, { bold: true }),
      rule(),
      ...done,
      h(
        Box,
        null,
        h(Text, { bold: true }, capital(ask.label)),
        h(
          Text,
          { dimColor: true, wrap: 'truncate-end' },
          ` (${t('interactive.step', { step: a.step + 1, count: a.entry.asks.length })}${ask.note ? `; ${ask.note}` : ''})`,
        ),
      ),
      ...(choices
        ? choices.slice(top, top + room).map((c, i) => {
            const on = top + i === a.choice;
            return h(
              Text,
              { key: `c-${c}`, color: on ? 'cyan' : undefined, bold: on, wrap: 'truncate-end' },
              `${on ? '❯' : ' '} ${c}`,
            );
          })
        : [
            h(
              Box,
              { key: 'input' },
              h(Text, { color: 'cyan' }, '› '),
              h(Text, null, width(a.text) > w - 4 ? `…${[...a.text].slice(-(w - 5)).join('')}` : a.text),
              h(Text, { inverse: true }, ' '),
            ),
          ]),
      a.problem ? line(a.problem, { color: 'red' }) : null,
      rule(),
      line(preview, { dimColor: true }),
      line(t(last ? 'interactive.keys_ask_last' : 'interactive.keys_ask'), { dimColor: true }),
    );
  }

  // the palette takes the terminal's alternate screen (as less and vim do): what was on the screen comes
  // back when it closes, and the command's output follows the line that ran `lintel`
  ctx.stdout.write(ALT_SCREEN_ON);
  try {
    const instance = ink.render(h(App), {
      stdout: ctx.stdout,
      stdin: ctx.stdin,
      stderr: ctx.stderr,
      exitOnCtrlC: false,
      patchConsole: false,
    });
    await instance.waitUntilExit();
    instance.cleanup();
  } finally {
    ctx.stdout.write(ALT_SCREEN_OFF);
  }
  return result;
}
