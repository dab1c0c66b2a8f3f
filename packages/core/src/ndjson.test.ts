import { expect, it } from 'vitest';
import { ApiError, ndjsonValues } from './api-client';

/** A reply's body as chunks of `size` bytes. */
function body(text: string, size: number): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(at, at + size));
      at += size;
    },
  });
}

async function values(text: string, size: number): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const batch of ndjsonValues(body(text, size))) out.push(...batch);
  return out;
}

const records = [
  { id: 1, name: 'plain' },
  { id: 2, name: 'ü ☃ 𝄞, "quoted"\nand a line break', list: [1, null, { a: [] }] },
  { id: 3, name: '' },
  'a string',
  42,
];
const ndjson = records.map((r) => JSON.stringify(r)).join('\n') + '\n';

it('reads the values of an NDJSON reply however its chunks cut its lines and characters', async () => {
  for (const size of [1, 2, 3, 5, 7, 16, 64, 1000]) expect(await values(ndjson, size)).toEqual(records);
});

it('skips blank lines and reads CRLF line ends', async () => {
  const text = `{"a":1}\r\n\n  \n{"b":2}\r\n`;
  for (const size of [1, 4, 100]) expect(await values(text, size)).toEqual([{ a: 1 }, { b: 2 }]);
});

it('a line that is no JSON throws; a reply cut off in a line is a network error', async () => {
  await expect(values('{"a":1}\n{"b":\n', 100)).rejects.toThrow(SyntaxError);
  const cut = values('{"a":1}\n{"b":2', 3);
  await expect(cut).rejects.toBeInstanceOf(ApiError);
  await expect(cut).rejects.toMatchObject({ code: 'network_error' });
});
