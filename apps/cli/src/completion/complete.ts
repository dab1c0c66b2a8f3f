import { Help, type Argument, type Command as Commander, type Option } from 'commander';
import { hintOf, valuesOf, type ValueHint } from '../meta';

/** One word the shell may offer, with the line that says what it is (zsh and fish show it). */
export interface Candidate {
  value: string;
  description?: string;
}

export interface Completion {
  candidates: Candidate[];
  /** nothing of lintel's own fits here but a file name does: the shell completes file names */
  files: boolean;
}

const help = new Help();

/** The first line of a description, without the tabs and line ends the protocol uses. */
const oneLine = (s: string | undefined) => (s ?? '').split('\n')[0]!.replace(/\t/g, ' ').trim();

function findSub(cmd: Commander, word: string): Commander | undefined {
  return help.visibleCommands(cmd).find((c) => c.name() === word || c.aliases().includes(word));
}

function findOption(cmd: Commander, word: string): Option | undefined {
  return help.visibleOptions(cmd).find((o) => o.long === word || o.short === word);
}

/** The values of a hint that start with `cur`; for a list (`--fields id,na`), its last item. */
function fromHint(hint: ValueHint | undefined, cur: string, prefix = ''): Completion {
  const values = valuesOf(hint);
  if (hint?.list) {
    const comma = cur.lastIndexOf(',');
    const done = comma < 0 ? '' : cur.slice(0, comma + 1);
    const taken = new Set(done.split(',').filter(Boolean));
    const last = cur.slice(comma + 1);
    return {
      candidates: values
        .filter((v) => !taken.has(v) && v.startsWith(last))
        .map((v) => ({ value: `${prefix}${done}${v}` })),
      files: false,
    };
  }
  return {
    candidates: values.filter((v) => v.startsWith(cur)).map((v) => ({ value: `${prefix}${v}` })),
    files: Boolean(hint?.files),
  };
}

function options(cmd: Commander, cur: string): Completion {
  const candidates = help
    .visibleOptions(cmd)
    .flatMap((o) => {
      const names = [o.long, cur.startsWith('--') ? undefined : o.short].filter((n): n is string => !!n);
      return names.map((value) => ({ value, description: oneLine(o.description) }));
    })
    .filter((c) => c.value.startsWith(cur));
  return { candidates, files: false };
}

function commands(cmd: Commander, cur: string): Completion {
  return {
    candidates: help
      .visibleCommands(cmd)
      .filter((c) => c.name().startsWith(cur))
      .map((c) => ({ value: c.name(), description: oneLine(c.description()) })),
    files: false,
  };
}

function argumentAt(cmd: Commander, index: number): Argument | undefined {
  const args = cmd.registeredArguments;
  const last = args[args.length - 1];
  return args[index] ?? (last?.variadic ? last : undefined);
}

/**
 * What may come at the word under the cursor, read from the program's own tree, so completion never drifts
 * from the commands: `words` are the words after `lintel`, the last one the (perhaps empty) word being typed.
 * Sub-commands where the command has them, flags after `-`, the values of the flag before the cursor (enum
 * values, context names, true/false), the values of a positional argument, or file names where a file goes.
 */
export function complete(program: Commander, words: readonly string[]): Completion {
  const before = words.slice(0, -1);
  const cur = words[words.length - 1] ?? '';
  let cmd = program;
  /** a flag whose value is the next word */
  let pending: Option | null = null;
  let positional = 0;
  let operandsOnly = false;
  /** `lintel help <command>` or `lintel users help <verb>`: the command whose sub-commands are named */
  let helpOf: Commander | null = null;

  for (const word of before) {
    if (pending) {
      pending = null;
      continue;
    }
    if (!operandsOnly && word === '--') {
      operandsOnly = true;
      continue;
    }
    if (!operandsOnly && word.startsWith('-') && word.length > 1) {
      if (word.includes('=')) continue;
      const option = findOption(cmd, word);
      if (option?.required) pending = option;
      continue;
    }
    if (helpOf) {
      positional++;
      continue;
    }
    const sub = positional === 0 ? findSub(cmd, word) : undefined;
    if (sub && sub.name() === 'help' && !cmd.commands.includes(sub)) {
      helpOf = cmd;
      continue;
    }
    if (sub) {
      cmd = sub;
      continue;
    }
    positional++;
  }

  if (pending) return fromHint(hintOf(pending), cur);
  if (helpOf) return positional === 0 ? commands(helpOf, cur) : { candidates: [], files: false };
  if (!operandsOnly && cur.startsWith('-')) {
    const eq = cur.indexOf('=');
    if (eq > 0) {
      const option = findOption(cmd, cur.slice(0, eq));
      if (!option || option.negate) return { candidates: [], files: false };
      const values = fromHint(hintOf(option), cur.slice(eq + 1), cur.slice(0, eq + 1));
      return values;
    }
    return options(cmd, cur);
  }
  if (positional === 0 && cmd.commands.length) return commands(cmd, cur);
  const argument = argumentAt(cmd, positional);
  if (argument) return fromHint(hintOf(argument), cur);
  // nothing more to name: the flags, so `lintel whoami <Tab>` still shows what there is
  return operandsOnly ? { candidates: [], files: false } : options(cmd, cur);
}

/** The `__complete` protocol: `value<TAB>description` lines, then `:1` (file names fit) or `:0`. */
export function completionText(c: Completion): string {
  const lines = c.candidates.map((x) => (x.description ? `${x.value}\t${x.description}` : x.value));
  return [...lines, c.files ? ':1' : ':0'].join('\n') + '\n';
}
