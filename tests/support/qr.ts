import jsQR from 'jsqr';
import { Jimp } from 'jimp';

/**
 * Reads a QR code image back as a phone or a panel's camera would (jsQR, an independent decoder): the
 * payload, or null when none can be read. For the QR images Lintel draws.
 */
export async function readQr(image: Buffer): Promise<string | null> {
  const img = await Jimp.read(image);
  const { data, width, height } = img.bitmap;
  return jsQR(new Uint8ClampedArray(data.buffer, data.byteOffset, data.length), width, height)?.data ?? null;
}

/** The SVG of a `data:image/svg+xml;base64,…` URL. */
export function dataUrlSvg(url: string): string {
  const m = /^data:image\/svg\+xml;base64,(.+)$/.exec(url);
  if (!m) throw new Error(`not an SVG data URL: ${url.slice(0, 40)}`);
  return Buffer.from(m[1]!, 'base64').toString('utf8');
}

/**
 * Reads the QR code of an SVG drawn as `qrcode` draws it (a white square, then the dark modules as one
 * stroked path of `M x y`, `m dx dy` and `h n` runs): the modules painted into a bitmap, 8 pixels each,
 * read by jsQR. Null when no code can be read.
 */
export function readSvgQr(svg: string): string | null {
  const size = Number(/viewBox="0 0 (\d+) \d+"/.exec(svg)?.[1]);
  const d = /<path stroke="#000000" d="([^"]+)"/.exec(svg)?.[1];
  if (!size || !d) return null;
  const dark = new Set<string>();
  let x = 0;
  let y = 0;
  for (const [, op, a, b] of d.matchAll(/([MmHh])(-?[\d.]+)(?:\s(-?[\d.]+))?/g)) {
    if (op === 'M') [x, y] = [Number(a), Number(b)];
    else if (op === 'm') [x, y] = [x + Number(a), y + Number(b)];
    else {
      const n = Number(a);
      for (let i = 0; i < n; i++) dark.add(`${Math.floor(x + i)},${Math.floor(y)}`);
      x += n;
    }
  }
  const scale = 8;
  const w = size * scale;
  const px = new Uint8ClampedArray(w * w * 4).fill(255);
  for (let py = 0; py < w; py++)
    for (let qx = 0; qx < w; qx++)
      if (dark.has(`${Math.floor(qx / scale)},${Math.floor(py / scale)}`)) {
        const o = (py * w + qx) * 4;
        px[o] = px[o + 1] = px[o + 2] = 0;
      }
  return jsQR(px, w, w)?.data ?? null;
}
