/**
 * A streaming reader of a JSON array of objects (`[{...}, {...}]`): it holds one object's text at a time,
 * never the whole file. Each object comes with the line it starts on. Scanning tracks only strings and
 * nesting; the objects themselves are read by JSON.parse.
 */
export class JsonSyntaxError extends Error {
  /** `reason` is a key of `cli:file_problems`; `parser` carries JSON.parse's own words in `detail`. */
  constructor(
    readonly line: number,
    readonly reason: FileProblem,
    readonly detail = '',
  ) {
    super(`line ${line}: ${reason}${detail ? `: ${detail}` : ''}`);
  }
}

export type FileProblem =
  | 'expected_array'
  | 'expected_object'
  | 'expected_comma'
  | 'text_after_array'
  | 'empty_file'
  | 'array_not_closed'
  | 'parser'
  | 'no_header'
  | 'beyond_last_column'
  | 'cell_too_long'
  | 'bad_cell';

export interface JsonItem {
  line: number;
  value: Record<string, unknown>;
}

type State = 'start' | 'between' | 'item' | 'after' | 'end';

export async function* jsonArrayItems(chunks: AsyncIterable<string>): AsyncGenerator<JsonItem> {
  let state: State = 'start';
  let line = 1;
  let depth = 0;
  let inString = false;
  let escaped = false;
  let itemLine = 0;
  // the current object's text: pieces of chunks, joined once the object closes
  let parts: string[] = [];
  let sawItem = false;

  const fail = (reason: FileProblem): never => {
    throw new JsonSyntaxError(line, reason);
  };
  const isSpace = (c: string) => c === ' ' || c === '\t' || c === '\r' || c === '\n' || c === '\ufeff';

  for await (const chunk of chunks) {
    let from = 0;
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i]!;
      if (state === 'item') {
        if (c === '\n') line++;
        if (inString) {
          if (escaped) escaped = false;
          else if (c === '\\') escaped = true;
          else if (c === '"') inString = false;
          continue;
        }
        if (c === '"') inString = true;
        else if (c === '{' || c === '[') depth++;
        else if (c === '}' || c === ']') {
          depth--;
          if (depth === 0) {
            parts.push(chunk.slice(from, i + 1));
            const text = parts.join('');
            parts = [];
            let value: unknown;
            try {
              value = JSON.parse(text);
            } catch (err) {
              throw new JsonSyntaxError(itemLine, 'parser', (err as Error).message);
            }
            yield { line: itemLine, value: value as Record<string, unknown> };
            state = 'after';
          }
        }
        continue;
      }
      if (c === '\n') {
        line++;
        continue;
      }
      if (isSpace(c)) continue;
      if (state === 'start') {
        if (c !== '[') fail('expected_array');
        state = 'between';
      } else if (state === 'between') {
        if (c === ']' && !sawItem) state = 'end';
        else if (c === '{') {
          state = 'item';
          sawItem = true;
          depth = 1;
          itemLine = line;
          from = i;
        } else fail('expected_object');
      } else if (state === 'after') {
        if (c === ',') state = 'between';
        else if (c === ']') state = 'end';
        else fail('expected_comma');
      } else fail('text_after_array');
    }
    if (state === 'item') parts.push(chunk.slice(from));
  }
  // (the loop above moves the state; the compiler cannot follow it through the generator)
  const last = state as State;
  if (last !== 'end') fail(last === 'start' ? 'empty_file' : 'array_not_closed');
}

/** NDJSON (one object per line): each non-empty line is an object. */
export async function* ndjsonItems(chunks: AsyncIterable<string>): AsyncGenerator<JsonItem> {
  let rest = '';
  let line = 0;
  const parse = (text: string, at: number): JsonItem | null => {
    const s = text.trim();
    if (!s) return null;
    let value: unknown;
    try {
      value = JSON.parse(s);
    } catch (err) {
      throw new JsonSyntaxError(at, 'parser', (err as Error).message);
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      throw new JsonSyntaxError(at, 'expected_object');
    return { line: at, value: value as Record<string, unknown> };
  };
  for await (const chunk of chunks) {
    let from = 0;
    let nl = chunk.indexOf('\n');
    while (nl >= 0) {
      line++;
      const item = parse(rest + chunk.slice(from, nl), line);
      rest = '';
      if (item) yield item;
      from = nl + 1;
      nl = chunk.indexOf('\n', from);
    }
    rest += chunk.slice(from);
  }
  const item = parse(rest, line + 1);
  if (item) yield item;
}
