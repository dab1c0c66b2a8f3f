import type { Key } from 'ink';
import type { PickerFamily, PickerRow } from '@lintel/commands';
import type { CliContext } from '../context';
import { describeFailure } from '../errors';
import { t } from '../i18n';
import { valuesOf, type Ask } from '../meta';
import {
  answered,
  argvOf,
  askOf,
  atOptions,
  back,
  optionsLeft,
  rowAnswer,
  rowName,
  shellLine,
  startAsking,
  switchedOn,
  type Answer,
  type Asking,
} from './asking';
import { searchTexts, type Entry } from './entries';
import { rank } from './fuzzy';
import { keysOf } from './keys';

/** A family's rows whose name matches a search (the first page), for the ids the palette asks for. */
export type Lookup = (family: PickerFamily, search: string) => Promise<PickerRow[]>;

/** How long typing may pause before the rows are searched again. */
const SEARCH_DEBOUNCE_MS = 150;

/** Where the palette stood when it ran a command: it opens there again when the command failed. */
export interface Resume {
  query: string;
  selected: number;
  focus: 'search' | 'list';
  asking: Asking | null;
}

/**
 * What the palette ends with: a command line to run (and where it stood), or nothing (Esc, or Ctrl+C).
 */
export type PaletteResult =
  { kind: 'run'; argv: string[]; resume: Resume } | { kind: 'quit' } | { kind: 'interrupt' };

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
  /** why the last command failed, shown under the list (a step that asks shows it as its problem) */
  problem: string | null;
  closing: boolean;
  /** the terminal is in raw mode: keys typed now are read */
  ready: boolean;
}

/**
 * The interactive palette (`lintel` alone at a terminal), drawn by ink: a search box over every command the
 * user may run, then the command's required arguments one at a time, then a list of its optional ones to
 * add before it runs. ink and React load only here.
 */
export async function openPalette(
  ctx: CliContext,
  entries: readonly Entry[],
  header: { title: string; detail: string },
  lookup: Lookup,
  /** a command run from here failed: open where it stood, what was typed kept, with why it failed */
  resumed?: { at: Resume; problem: string },
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
      query: resumed?.at.query ?? '',
      selected: resumed?.at.selected ?? 0,
      focus: resumed?.at.focus ?? 'search',
      asking: resumed?.at.asking ? { ...resumed.at.asking, entered: false, problem: resumed.problem } : null,
      problem: resumed && !resumed.at.asking ? resumed.problem : null,
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
    const finish = (r: PaletteResult | { kind: 'run'; argv: string[] }) => {
      const { query, selected, focus, asking } = store.current;
      result = r.kind === 'run' ? { ...r, resume: { query, selected, focus, asking } } : r;
      set({ closing: true });
    };
    // a command with nothing to ask runs at once; one with optional arguments only (a list's search and
    // sort, `profile update`) opens their list, Run first
    const choose = (entry: Entry) => {
      if (!entry.asks.length && !entry.options.length)
        return finish({ kind: 'run', argv: argvOf(entry, []) });
      setAsking(startAsking(entry));
    };
    const move = (by: number) => {
      const list = matches(store.current.query);
      if (!list.length) return;
      set({ focus: 'list', selected: (selectedOf(store.current) + by + list.length) % list.length });
    };
    const edit = (query: string) => set({ query, selected: 0, focus: 'search', problem: null });

    // every key of a chunk that came in one write, in order (keys.ts)
    ink.useInput((chunk, chunkKey) => {
      for (const [input, key] of keysOf(chunk, chunkKey)) onKey(input, key);
    });
    function onKey(input: string, key: Key) {
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
    }

    // after useInput's own effect: the terminal is in raw mode now, and the key line says so
    React.useEffect(() => set({ ready: true }), []);

    // a step that asks for rows: search them as the person types (the first at once, then after a pause)
    const now = store.current.asking;
    const asked = now && askOf(now);
    const searching = asked?.ref ? `${now!.step}\u0000${asked.flag}\u0000${now!.text.trim()}` : null;
    React.useEffect(() => {
      const a = store.current.asking;
      const ref = a && askOf(a)?.ref;
      // a role that may not list them is not asked again at every key (each refusal is an audit event)
      if (!a || !ref || a.failed) return;
      const search = a.text.trim();
      let live = true;
      const still = () => {
        const b = store.current.asking;
        return live && b?.entry === a.entry && b.step === a.step && b.option === a.option ? b : null;
      };
      const timer = setTimeout(
        () =>
          lookup(ref.family, search).then(
            (rows) => {
              const b = still();
              if (!b) return;
              const c = { ...b, found: { search, rows }, failed: null, choice: 0 };
              if (!c.entered || c.text.trim() !== search) return setAsking(c);
              const got = rowAnswer(c);
              if (got !== 'searching') next(c, got);
            },
            (err: unknown) => {
              const b = still();
              if (!b) return;
              const c = { ...b, found: null, failed: describeFailure(err).text };
              if (!c.entered) return setAsking(c);
              const got = rowAnswer(c);
              next({ ...c, entered: false }, got === 'searching' ? null : got);
            },
          ),
        a.found ? SEARCH_DEBOUNCE_MS : 0,
      );
      return () => {
        live = false;
        clearTimeout(timer);
      };
    }, [searching]);

    function answer(a: Asking, input: string, key: Key) {
      if (key.escape) return setAsking(back(a));
      if (atOptions(a)) return chooseOption(a, input, key);
      const ask = askOf(a)!;
      const choices = ask.choices ? valuesOf({ values: ask.choices }) : null;
      if (key.return || input === '\n' || input === '\r') {
        if (!ask.ref) {
          const value = choices ? (choices[a.choice] ?? '') : a.text.trim();
          return next(a, value ? { value, label: value } : null);
        }
        const got = rowAnswer(a);
        // Enter before the rows of what was typed came: it takes them when they come
        return got === 'searching' ? setAsking({ ...a, entered: true }) : next(a, got);
      }
      if (ask.ref) return pick(a, ask, input, key);
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

    /** The answer of this question taken: on to the next one, or the command runs after the last. */
    function next(a: Asking, answer: Answer | null) {
      if (!answer) return setAsking({ ...a, entered: false, problem: t('interactive.required') });
      const to = answered(a, answer);
      if (to === 'run') return finish({ kind: 'run', argv: argvOf(a.entry, [...a.values, answer.value]) });
      setAsking(to);
    }

    /** Keys at the list of optional arguments: type to filter, move, Enter runs (first row) or asks one. */
    function chooseOption(a: Asking, input: string, key: Key) {
      const left = optionsLeft(a);
      const n = left.length + 1;
      const at = Math.min(a.choice, n - 1);
      if (key.return || input === '\n' || input === '\r') {
        // a filter that matches nothing does not run the command by surprise
        if (at === 0 && a.text.trim() && !left.length)
          return setAsking({ ...a, problem: t('interactive.nothing') });
        if (at === 0) return finish({ kind: 'run', argv: argvOf(a.entry, a.values, a.extra) });
        const option = left[at - 1]!;
        if (option.switch) return setAsking(switchedOn(a, option, t('output.yes')));
        return setAsking({ ...startAsking(a.entry, a.step, a.values, a.labels, a.extra), option });
      }
      if (key.upArrow || (key.ctrl && input === 'p')) return setAsking({ ...a, choice: (at - 1 + n) % n });
      if (key.downArrow || key.tab || (key.ctrl && input === 'n'))
        return setAsking({ ...a, choice: (at + 1) % n });
      // a filter typed puts the first option that has it under Enter
      const filtered = (text: string) =>
        setAsking({ ...a, text, choice: text.trim() ? 1 : 0, problem: null });
      if (key.backspace || key.delete) {
        if (!a.text && a.extra.length) return setAsking({ ...a, extra: a.extra.slice(0, -1) });
        return filtered([...a.text].slice(0, -1).join(''));
      }
      if (key.ctrl && input === 'u') return filtered('');
      if (!key.ctrl && !key.meta && printable(input)) filtered(a.text + input);
    }

    /** Keys at a step that asks for rows: type to search, move, Tab to pick several. */
    function pick(a: Asking, ask: Ask, input: string, key: Key) {
      const rows = a.found?.rows ?? [];
      const n = rows.length;
      if (key.upArrow || (key.ctrl && input === 'p'))
        return n && setAsking({ ...a, choice: (a.choice - 1 + n) % n });
      if (key.downArrow || (key.ctrl && input === 'n') || (key.tab && !ask.ref?.many))
        return n && setAsking({ ...a, choice: (a.choice + 1) % n });
      if (key.tab) {
        const row = rows[a.choice];
        if (!row) return;
        const picked = a.picked.some((r) => r.id === row.id)
          ? a.picked.filter((r) => r.id !== row.id)
          : [...a.picked, row];
        return setAsking({ ...a, picked, choice: n ? (a.choice + 1) % n : 0, problem: null });
      }
      const typed = (text: string) => setAsking({ ...a, text, choice: 0, problem: null, entered: false });
      if (key.backspace || key.delete) {
        if (!a.text && a.picked.length) return setAsking({ ...a, picked: a.picked.slice(0, -1) });
        return typed([...a.text].slice(0, -1).join(''));
      }
      if (key.ctrl && input === 'u') return typed('');
      if (!key.ctrl && !key.meta && printable(input)) typed(a.text + input);
    }

    const { query, focus, asking, problem, closing, ready } = store.current;
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
      problem ? line(problem, { color: 'red' }) : null,
      rule(),
      line(
        ready
          ? `${t('interactive.count', { shown: shown.length, total: entries.length })} · ${t('interactive.keys_list')}`
          : '',
        { dimColor: true },
      ),
    );
  }

  /** The answers so far, one a line: the required ones, then the optional ones added. */
  function doneLines(a: Asking) {
    const done = [
      ...a.entry.asks.slice(0, a.step).map((q, i) => [q.label, a.labels[i] ?? ''] as const),
      ...a.extra.map((x) => [x.ask.label, x.label] as const),
    ];
    return done.map(([label, value], i) =>
      h(
        Box,
        { key: `done-${i}` },
        h(Text, { dimColor: true }, `  ${capital(label)}: `),
        h(Text, { wrap: 'truncate-end' }, value),
      ),
    );
  }

  /** A text box with the cursor, showing the end of a long text. */
  const inputLine = (text: string, w: number) =>
    h(
      Box,
      { key: 'input' },
      h(Text, { color: 'cyan' }, '› '),
      h(Text, null, width(text) > w - 4 ? `…${[...text].slice(-(w - 5)).join('')}` : text),
      h(Text, { inverse: true }, ' '),
    );

  /** A question's title line: the label, then where it stands and a note, dimmed. */
  const titleLine = (label: string, detail: string) =>
    h(
      Box,
      null,
      h(Text, { bold: true }, capital(label)),
      h(Text, { dimColor: true, wrap: 'truncate-end' }, ` (${detail})`),
    );

  /** The first row that fits in `room` rows with `choice` in sight. */
  const windowTop = (choice: number, count: number, room: number) =>
    Math.min(Math.max(0, choice - room + 1), Math.max(0, count - room));

  function AskView({ a, w }: { a: Asking; w: number }) {
    const ask = askOf(a);
    const answers = a.step + a.extra.length;
    const footer = (
      preview: string,
      keys: 'interactive.keys_options' | 'interactive.keys_ask' | 'interactive.keys_ask_last',
    ) => [
      a.problem ? line(a.problem, { color: 'red', key: 'problem' }) : null,
      rule(),
      line(preview, { dimColor: true, key: 'preview' }),
      line(t(keys), { dimColor: true, key: 'keys' }),
    ];
    const head = [
      h(Header, { key: 'header' }),
      line(a.entry.title, { bold: true, key: 'title' }),
      rule(),
      ...doneLines(a),
    ];

    if (!ask) {
      // the optional arguments: Run first, then each one not given yet
      const left = optionsLeft(a);
      const at = Math.min(a.choice, left.length);
      const room = Math.max(3, rows() - 10 - answers);
      const top = windowTop(at, left.length + 1, room);
      const flagWidth = Math.min(Math.max(0, ...left.map((o) => width(o.flag ?? ''))), Math.floor(w * 0.4));
      const rowsShown = [
        { key: 'run', label: t('interactive.run'), flag: '' },
        ...left.map((o) => ({ key: o.flag ?? o.label, label: capital(o.label), flag: o.flag ?? '' })),
      ]
        .slice(top, top + room)
        .map((r, i) => {
          const on = top + i === at;
          return h(
            Box,
            { key: `o-${r.key}` },
            h(
              Text,
              { color: on ? 'cyan' : undefined, bold: on },
              `${on ? '❯' : ' '} ${fit(r.label, Math.max(4, w - 2 - flagWidth - 3))}`,
            ),
            h(Text, { dimColor: !on, color: on ? 'cyan' : undefined }, ` ${fit(r.flag, flagWidth)}`),
          );
        });
      return h(
        Box,
        { flexDirection: 'column' },
        ...head,
        titleLine(t('interactive.options'), t('interactive.options_note')),
        inputLine(a.text, w),
        ...rowsShown,
        ...footer(shellLine(argvOf(a.entry, a.values, a.extra)), 'interactive.keys_options'),
      );
    }

    const choices = ask.choices ? valuesOf({ values: ask.choices }) : null;
    const found = ask.ref ? (a.found?.rows ?? []) : null;
    const room = Math.max(3, rows() - (found ? 11 : 9) - answers);
    const top = windowTop(a.choice, (choices ?? found ?? []).length, room);
    // the command line so far, as it would be typed, with what is chosen or typed now
    const got = ask.ref ? rowAnswer(a) : null;
    let now = choices ? (choices[a.choice] ?? '') : a.text.trim();
    if (ask.ref) now = got && got !== 'searching' ? got.value : '';
    const preview = a.option
      ? argvOf(a.entry, a.values, now ? [...a.extra, { ask, value: now, label: now }] : a.extra)
      : argvOf(a.entry, now ? [...a.values, now] : a.values);
    const note = ask.ref
      ? t(ask.ref.many ? 'interactive.rows_note_several' : 'interactive.rows_note')
      : ask.note;
    const where = a.option
      ? t('interactive.optional')
      : t('interactive.step', { step: a.step + 1, count: a.entry.asks.length });
    const last = !a.option && a.step + 1 >= a.entry.asks.length && !a.entry.options.length;
    return h(
      Box,
      { flexDirection: 'column' },
      ...head,
      titleLine(ask.label, note ? `${where}; ${note}` : where),
      ...(choices
        ? choices.slice(top, top + room).map((c, i) => {
            const on = top + i === a.choice;
            return h(
              Text,
              { key: `c-${c}`, color: on ? 'cyan' : undefined, bold: on, wrap: 'truncate-end' },
              `${on ? '❯' : ' '} ${c}`,
            );
          })
        : [inputLine(a.text, w), ...(found ? rowLines(a, found.slice(top, top + room), top, w) : [])]),
      ...footer(shellLine(preview), last ? 'interactive.keys_ask_last' : 'interactive.keys_ask'),
    );
  }

  /** The rows found for a step that asks for rows: name, the family's hint and the id; ✓ on those picked. */
  function rowLines(a: Asking, shownRows: readonly PickerRow[], top: number, w: number) {
    const hintWidth = Math.min(
      Math.max(0, ...shownRows.map((r) => width(r.hint ?? ''))),
      Math.floor(w * 0.3),
    );
    const idWidth = Math.max(0, ...shownRows.map((r) => width(`#${r.id}`)));
    const hintColumn = hintWidth ? hintWidth + 2 : 0;
    const nameWidth = Math.max(4, w - 3 - hintColumn - 2 - idWidth - 1);
    const lines = shownRows.map((r, i) => {
      const on = top + i === a.choice;
      const mark = a.picked.some((p) => p.id === r.id) ? '✓' : ' ';
      return h(
        Box,
        { key: `r-${r.id}` },
        h(
          Text,
          { color: on ? 'cyan' : undefined, bold: on },
          `${on ? '❯' : ' '}${mark} ${fit(r.name, nameWidth)}`,
        ),
        h(
          Text,
          { dimColor: true },
          `${hintWidth ? `  ${fit(r.hint ?? '', hintWidth)}` : ''}  ${`#${r.id}`.padStart(idWidth)}`,
        ),
      );
    });
    if (a.failed)
      lines.push(line(`${a.failed} ${t('interactive.type_ids')}`, { color: 'red', key: 'failed' }));
    else if (a.found && !shownRows.length)
      lines.push(line(t('interactive.nothing'), { dimColor: true, key: 'none' }));
    if (a.picked.length)
      lines.push(
        line(t('interactive.picked', { names: a.picked.map(rowName).join(', ') }), { key: 'picked' }),
      );
    return lines;
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
