import { describe, expect, it } from 'vitest';
import { parse } from 'csv-parse/sync';
import { CsvReader, CsvSyntaxError, MAX_RECORD_CHARS } from './csv';

/** The reader fed `text` in pieces of `size` characters. */
function read(text: string, size: number) {
  const reader = new CsvReader();
  const out: { fields: string[]; line: number }[] = [];
  for (let i = 0; i < text.length; i += size) out.push(...reader.push(text.slice(i, i + size)));
  out.push(...reader.end());
  return out;
}

/** What csv-parse read from the same text, with the options the CLI gave it. */
function reference(text: string) {
  return (
    parse(text, { bom: true, info: true, skip_empty_lines: true }) as unknown as Array<{
      record: string[];
      info: { lines: number };
    }>
  ).map(({ record, info }) => ({ fields: record, line: info.lines }));
}

const texts = {
  plain: 'login,name,role\na,b,c\nd,e,f\n',
  'no final line end': 'login,name\na,b\nc,d',
  crlf: 'login,name\r\na,b\r\n\r\nc,d\r\n',
  cr: 'login,name\ra,b\rc,d\r',
  bom: '\ufefflogin,name\na,b\n',
  'empty lines': '\n\nlogin,name\n\na,b\n\n\nc,d\n\n',
  quoted: 'login,name\n"a","b, with a comma"\n"c ""quoted""",""\n"",d\n',
  'line ends inside quotes': 'login,name\n"a\nb",c\n"d\r\ne",f\ng,h\n',
  'empty fields': 'a,b,c\n,,\n"",,\nx,,z\n',
  'unicode and a long field': `a,b\nпривет,${'x'.repeat(5000)}\n"${'y'.repeat(3000)}",z\n`,
  'quotes at every end': 'a,b\n"1","2"\n"3",""\n"""","4"\n',
} as const;

describe('CsvReader', () => {
  for (const [name, text] of Object.entries(texts))
    it.each([1, 2, 3, 7, 64, 100_000])(`reads as csv-parse did: ${name} (pieces of %i)`, (size) => {
      expect(read(text, size)).toEqual(reference(text));
    });

  it('refuses what csv-parse refused, with the line', () => {
    const cases: Array<[string, number, RegExp]> = [
      ['a,b,c\n1,2\n', 2, /Invalid Record Length: expect 3, got 2 on line 2/],
      ['a,b\n1,2\n3,4,5\n', 3, /Invalid Record Length/],
      ['a,b\n1,x"y\n', 2, /Invalid Opening Quote/],
      ['a,b\n"1"x,2\n', 2, /Invalid Closing Quote/],
      ['a,b\n"1,2\n3,4\n', 4, /Quote Not Closed/],
    ];
    for (const [text, line, message] of cases) {
      expect(() => reference(text)).toThrow(message);
      for (const size of [1, 3, 1000]) {
        let caught: unknown;
        try {
          read(text, size);
        } catch (err) {
          caught = err;
        }
        expect(caught, `${text} in pieces of ${size}`).toBeInstanceOf(CsvSyntaxError);
        expect((caught as CsvSyntaxError).message).toMatch(message);
        expect((caught as CsvSyntaxError).lines).toBe(line);
      }
    }
  });

  it('refuses a record longer than it reads again chunk after chunk (an unclosed quote)', () => {
    const reader = new CsvReader();
    reader.push('a,b\n"');
    const piece = 'x'.repeat(1024 * 1024);
    expect(() => {
      for (let i = 0; i <= MAX_RECORD_CHARS / piece.length; i++) reader.push(piece);
    }).toThrow(CsvSyntaxError);
  });
});
