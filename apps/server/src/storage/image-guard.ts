/**
 * What an image's structure announces, read before any decoder sees it (issue 20, item 2): a header that
 * says 100 × 100 is not enough when a second IHDR, a frame larger than its screen or ten thousand scans
 * follow it. `inspectImage` walks the file's chunks, markers or blocks — never inflating or decoding — and
 * refuses what a decoder would pay for out of proportion to the bytes sent. What it cannot know without
 * inflating (how much a PNG's data inflates to) it returns as a bound the decoder enforces.
 */

/** The decoder's limits (docs/decisions.md, "Hardening, second pass (HTTP)"). */
export interface ImageLimits {
  /** pixels of the image (width × height), and of each frame */
  maxPixels: number;
  /** JPEG scans (a progressive JPEG has about ten; each one is a pass over the whole image) */
  maxScans: number;
  /** frames of an animated GIF or PNG */
  maxFrames: number;
}

export const DefaultImageLimits: Omit<ImageLimits, 'maxPixels'> = { maxScans: 100, maxFrames: 100 };

export type ImageVerdict =
  | {
      ok: true;
      width: number;
      height: number;
      /** PNG: the most its image data may inflate to (the decoder refuses more) */
      inflateMax?: number;
    }
  | {
      ok: false;
      /** `malformed`: the structure contradicts itself; `limit`: over one of the limits */
      error: 'malformed' | 'limit';
      reason: string;
    };

const malformed = (reason: string): ImageVerdict => ({ ok: false, error: 'malformed', reason });
const over = (reason: string): ImageVerdict => ({ ok: false, error: 'limit', reason });

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const PNG_CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };
const PNG_DEPTHS: Record<number, number[]> = {
  0: [1, 2, 4, 8, 16],
  2: [8, 16],
  3: [1, 2, 4, 8],
  4: [8, 16],
  6: [8, 16],
};
/** Adam7: [x start, y start, x step, y step] of each pass */
const ADAM7 = [
  [0, 0, 8, 8],
  [4, 0, 8, 8],
  [0, 4, 4, 8],
  [2, 0, 4, 4],
  [0, 2, 2, 4],
  [1, 0, 2, 2],
  [0, 1, 1, 2],
] as const;

/** Bytes a PNG's image data inflates to: each row's filter byte and pixels, per Adam7 pass when interlaced. */
export function pngInflatedSize(width: number, height: number, bitsPerPixel: number, interlaced: boolean) {
  const rows = (w: number, h: number) => (w && h ? h * (1 + Math.ceil((w * bitsPerPixel) / 8)) : 0);
  if (!interlaced) return rows(width, height);
  let total = 0;
  for (const [xs, ys, xd, yd] of ADAM7)
    total += rows(Math.max(0, Math.ceil((width - xs) / xd)), Math.max(0, Math.ceil((height - ys) / yd)));
  return total;
}

function png(b: Uint8Array, limits: ImageLimits): ImageVerdict {
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  let pos = 8;
  let header: { width: number; height: number; inflateMax: number } | null = null;
  let frames = 0;
  let ended = false;
  while (pos + 8 <= b.length) {
    const length = v.getUint32(pos);
    const type = String.fromCharCode(b[pos + 4]!, b[pos + 5]!, b[pos + 6]!, b[pos + 7]!);
    if (pos + 12 + length > b.length) return malformed('png: a chunk runs past the end');
    const data = pos + 8;
    if (type === 'IHDR') {
      // one header, first: a second one is how a 100 × 100 file became 1.5 GB of pixels
      if (header || pos !== 8) return malformed('png: IHDR not first or not alone');
      if (length !== 13) return malformed('png: IHDR length');
      const width = v.getUint32(data);
      const height = v.getUint32(data + 4);
      const depth = b[data + 8]!;
      const colour = b[data + 9]!;
      const interlace = b[data + 12]!;
      if (!width || !height) return malformed('png: empty image');
      if (!PNG_DEPTHS[colour]?.includes(depth) || b[data + 10] !== 0 || b[data + 11] !== 0 || interlace > 1)
        return malformed('png: IHDR fields');
      if (width * height > limits.maxPixels) return over('png: pixels');
      header = {
        width,
        height,
        inflateMax: pngInflatedSize(width, height, depth * PNG_CHANNELS[colour]!, interlace === 1),
      };
    } else if (!header) return malformed('png: IHDR not first');
    else if (type === 'acTL' || type === 'fcTL') {
      if (type === 'fcTL' && ++frames > limits.maxFrames) return over('png: frames');
      if (type === 'fcTL' && length >= 12) {
        const fw = v.getUint32(data + 4);
        const fh = v.getUint32(data + 8);
        const fx = length >= 20 ? v.getUint32(data + 12) : 0;
        const fy = length >= 20 ? v.getUint32(data + 16) : 0;
        if (fx + fw > header.width || fy + fh > header.height)
          return malformed('png: frame outside the image');
      }
    } else if (type === 'IEND') {
      ended = true;
      break;
    }
    pos += 12 + length;
  }
  if (!header) return malformed('png: no IHDR');
  if (!ended) return malformed('png: no IEND');
  return { ok: true, width: header.width, height: header.height, inflateMax: header.inflateMax };
}

const SOF = new Set([0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf]);

function jpeg(b: Uint8Array, limits: ImageLimits): ImageVerdict {
  let pos = 2;
  let frame: { width: number; height: number } | null = null;
  let scans = 0;
  for (;;) {
    if (pos >= b.length) return malformed('jpeg: no EOI');
    if (b[pos] !== 0xff) return malformed('jpeg: marker expected');
    while (b[pos] === 0xff) pos++; // fill bytes
    if (pos >= b.length) return malformed('jpeg: no EOI');
    const marker = b[pos++]!;
    if (marker === 0xd9) break; // EOI
    if (marker === 0xd8) return malformed('jpeg: a second SOI');
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) continue; // TEM, RSTn: no length
    if (pos + 2 > b.length) return malformed('jpeg: cut segment');
    const length = (b[pos]! << 8) | b[pos + 1]!;
    if (length < 2 || pos + length > b.length) return malformed('jpeg: segment runs past the end');
    if (SOF.has(marker)) {
      // one frame: a second SOF (or a hierarchical JPEG's frames) is refused
      if (frame) return malformed('jpeg: more than one frame');
      if (length < 8) return malformed('jpeg: SOF length');
      const height = (b[pos + 3]! << 8) | b[pos + 4]!;
      const width = (b[pos + 5]! << 8) | b[pos + 6]!;
      if (!width || !height) return malformed('jpeg: empty frame');
      if (width * height > limits.maxPixels) return over('jpeg: pixels');
      frame = { width, height };
    }
    pos += length;
    if (marker === 0xda) {
      if (!frame) return malformed('jpeg: scan before frame');
      // each scan is a pass over the whole image: ten thousand of them cost minutes for 489 KB
      if (++scans > limits.maxScans) return over('jpeg: scans');
      // the entropy-coded data runs to the next marker that is not a stuffed 0x00 or a restart
      while (
        pos + 1 < b.length &&
        !(b[pos] === 0xff && b[pos + 1] !== 0 && !(b[pos + 1]! >= 0xd0 && b[pos + 1]! <= 0xd7))
      )
        pos++;
      if (pos + 1 >= b.length) return malformed('jpeg: no EOI');
    }
  }
  if (!frame || !scans) return malformed('jpeg: no image');
  return { ok: true, ...frame };
}

function gif(b: Uint8Array, limits: ImageLimits): ImageVerdict {
  if (b.length < 13) return malformed('gif: cut header');
  const u16 = (p: number) => b[p]! | (b[p + 1]! << 8);
  const width = u16(6);
  const height = u16(8);
  if (!width || !height) return malformed('gif: empty screen');
  if (width * height > limits.maxPixels) return over('gif: pixels');
  let pos = 13 + (b[10]! & 0x80 ? 3 * 2 ** ((b[10]! & 7) + 1) : 0);
  let frames = 0;
  /** skips a run of data sub-blocks; false when it runs past the end */
  const subBlocks = () => {
    while (pos < b.length && b[pos] !== 0) pos += 1 + b[pos]!;
    pos++;
    return pos <= b.length;
  };
  for (;;) {
    if (pos >= b.length) return malformed('gif: no trailer');
    const block = b[pos++]!;
    if (block === 0x3b) break;
    if (block === 0x21) {
      pos++; // label
      if (!subBlocks()) return malformed('gif: cut extension');
    } else if (block === 0x2c) {
      if (pos + 9 > b.length) return malformed('gif: cut image descriptor');
      const [x, y, w, h, flags] = [u16(pos), u16(pos + 2), u16(pos + 4), u16(pos + 6), b[pos + 8]!];
      // a frame larger than its screen: the 35-byte GIF that took 23 s
      if (!w || !h || x + w > width || y + h > height) return malformed('gif: frame outside the screen');
      if (++frames > limits.maxFrames) return over('gif: frames');
      pos += 9 + (flags & 0x80 ? 3 * 2 ** ((flags & 7) + 1) : 0);
      pos++; // LZW minimum code size
      if (!subBlocks()) return malformed('gif: cut image data');
    } else return malformed('gif: unknown block');
  }
  if (!frames) return malformed('gif: no frame');
  return { ok: true, width, height };
}

function bmp(b: Uint8Array, limits: ImageLimits): ImageVerdict {
  if (b.length < 26) return malformed('bmp: cut header');
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const headerSize = v.getUint32(14, true);
  const width = headerSize === 12 ? v.getUint16(18, true) : Math.abs(v.getInt32(18, true));
  const height = headerSize === 12 ? v.getUint16(20, true) : Math.abs(v.getInt32(22, true));
  if (!width || !height) return malformed('bmp: empty image');
  if (width * height > limits.maxPixels) return over('bmp: pixels');
  return { ok: true, width, height };
}

const startsWith = (b: Uint8Array, sig: number[]) => sig.every((x, i) => b[i] === x);

/** Walks an image's structure (PNG, JPEG, GIF, BMP); anything else is `malformed` (no decoder takes it). */
export function inspectImage(data: Uint8Array, limits: ImageLimits): ImageVerdict {
  if (startsWith(data, PNG_SIGNATURE)) return png(data, limits);
  if (startsWith(data, [0xff, 0xd8])) return jpeg(data, limits);
  if (startsWith(data, [0x47, 0x49, 0x46, 0x38])) return gif(data, limits);
  if (startsWith(data, [0x42, 0x4d])) return bmp(data, limits);
  return malformed('not an image this server decodes');
}
