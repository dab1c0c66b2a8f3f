/**
 * A CSV reader for imports (RFC 4180: `,` between fields, `"` around a field that holds one, `""` for a quote
 * inside it), as csv-parse read the files with `bom`, `info` and `skip_empty_lines`: the record delimiter is
 * the first line end met outside quotes (`\r\n`, `\n` or `\r`), empty lines are skipped, every record must
 * have as many fields as the first, and a record's line is the line it ends on. It parses a chunk at a time
 * and hands out the chunk's records together: csv-parse's per-character state machine and its per-record
 * stream events were the most of the CLI's time on a large file.
 */

/** A problem of the file's text: its message, and the line it was found on. */
export class CsvSyntaxError extends Error {
  constructor(
    message: string,
    readonly lines: number,
  ) {
    super(message);
  }
}

export interface CsvRecord {
  fields: string[];
  /** the line the record ends on (1-based) */
  line: number;
}

/** A record longer than this is refused rather than read again with every chunk that does not end it. */
export const MAX_RECORD_CHARS = 4 * 1024 * 1024;

const COMMA = 44;
const QUOTE = 34;
const LF = 10;
const CR = 13;

export class CsvReader {
  private rest = '';
  private started = false;
  /** the record delimiter, once found: '\n', '\r\n' or '\r' */
  private eol: string | null = null;
  /** lines before `rest` starts */
  private line = 1;
  private width = -1;

  /** The records the text read so far completes (the last incomplete one waits for more). */
  push(chunk: string): CsvRecord[] {
    let text = this.rest + chunk;
    if (!this.started && text.length) {
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      this.started = true;
    }
    const out: CsvRecord[] = [];
    const at = this.parse(text, false, out);
    this.rest = text.slice(at);
    if (this.rest.length > MAX_RECORD_CHARS)
      throw new CsvSyntaxError(`a record is longer than ${MAX_RECORD_CHARS} characters`, this.line);
    return out;
  }

  /** The last records, at the end of the file. */
  end(): CsvRecord[] {
    const out: CsvRecord[] = [];
    this.parse(this.rest, true, out);
    this.rest = '';
    return out;
  }

  /**
   * Parses whole records from `text` into `out`; answers where the first incomplete record starts (all of
   * `text` at the end). Lines are counted as records complete, so an incomplete one is counted again.
   */
  private parse(text: string, last: boolean, out: CsvRecord[]): number {
    const n = text.length;
    let pos = 0;
    let line = this.line;
    while (pos < n) {
      const start = pos;
      const startLine = line;
      const fields: string[] = [];
      let complete = false;
      let quotedAny = false;
      // one record
      for (;;) {
        // one field, at `pos`
        if (pos < n && text.charCodeAt(pos) === QUOTE) {
          quotedAny = true;
          let value = '';
          let from = pos + 1;
          let i = from;
          let closed = false;
          while (i < n) {
            const c = text.charCodeAt(i);
            if (c === QUOTE) {
              if (i + 1 < n && text.charCodeAt(i + 1) === QUOTE) {
                value += text.slice(from, i + 1);
                i += 2;
                from = i;
                continue;
              }
              if (i + 1 >= n && !last) break; // a quote at the chunk's end: "" or the close, not known yet
              value += text.slice(from, i);
              closed = true;
              i++;
              break;
            }
            if (c === LF || c === CR) {
              // a line end inside quotes: counted as csv-parse counts it (each character)
              line++;
            }
            i++;
          }
          if (!closed) {
            if (!last) {
              this.line = startLine;
              return start;
            }
            throw new CsvSyntaxError(
              `Quote Not Closed: the parsing is finished with an opening quote at line ${line}`,
              line,
            );
          }
          fields.push(value);
          pos = i;
          if (pos >= n) {
            if (!last) {
              this.line = startLine;
              return start;
            }
            complete = true;
            break;
          }
          const c = text.charCodeAt(pos);
          if (c === COMMA) {
            pos++;
            continue;
          }
          const eolLen = this.eolAt(text, pos, last);
          if (eolLen < 0) {
            this.line = startLine;
            return start;
          }
          if (eolLen > 0) {
            pos += eolLen;
            complete = true;
            break;
          }
          throw new CsvSyntaxError(
            `Invalid Closing Quote: got "${text[pos]}" at line ${line} instead of delimiter, record delimiter, trimable character (if activated) or comment`,
            line,
          );
        }
        // an unquoted field: up to a comma or the line's end
        let i = pos;
        let eolLen = 0;
        while (i < n) {
          const c = text.charCodeAt(i);
          if (c === COMMA) break;
          if (c === LF || c === CR) {
            eolLen = this.eolAt(text, i, last);
            if (eolLen < 0) {
              this.line = startLine;
              return start;
            }
            if (eolLen > 0) break;
          } else if (c === QUOTE) {
            throw new CsvSyntaxError(
              `Invalid Opening Quote: a quote is found on field ${fields.length} at line ${line}, value is ${JSON.stringify(text.slice(pos, i))}`,
              line,
            );
          }
          i++;
        }
        if (i >= n && !last) {
          this.line = startLine;
          return start;
        }
        fields.push(text.slice(pos, i));
        if (i < n && text.charCodeAt(i) === COMMA) {
          pos = i + 1;
          continue;
        }
        pos = i + eolLen;
        complete = true;
        break;
      }
      if (!complete) break;
      // an empty line (nothing, not even "") is skipped
      if (!(fields.length === 1 && fields[0] === '' && !quotedAny)) {
        if (this.width < 0) this.width = fields.length;
        else if (fields.length !== this.width)
          throw new CsvSyntaxError(
            `Invalid Record Length: expect ${this.width}, got ${fields.length} on line ${line}`,
            line,
          );
        out.push({ fields, line });
      }
      if (pos > start && pos <= n && this.endsWithEol(text, pos)) line++;
    }
    this.line = line;
    return n;
  }

  /** Whether the record that ends before `pos` ended with a line end (not with the text). */
  private endsWithEol(text: string, pos: number): boolean {
    const c = text.charCodeAt(pos - 1);
    return c === LF || c === CR;
  }

  /**
   * The length of the record delimiter at `i` (the first line end met decides which it is), 0 when the line
   * end there is not it, -1 when the text ends before it can be told.
   */
  private eolAt(text: string, i: number, last: boolean): number {
    const c = text.charCodeAt(i);
    if (this.eol === null) {
      if (c === CR) {
        if (i + 1 >= text.length && !last) return -1;
        this.eol = text.charCodeAt(i + 1) === LF ? '\r\n' : '\r';
      } else if (c === LF) this.eol = '\n';
      else return 0;
    }
    if (this.eol === '\n') return c === LF ? 1 : 0;
    if (this.eol === '\r') return c === CR ? 1 : 0;
    if (c !== CR) return 0;
    if (i + 1 >= text.length) return last ? 0 : -1;
    return text.charCodeAt(i + 1) === LF ? 2 : 0;
  }
}
