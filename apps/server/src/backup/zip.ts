/**
 * A zip written as its entries stream in (PKWARE's APPNOTE.TXT): each entry's local header, its bytes deflated
 * (or stored) as they come, then a data descriptor with their CRC-32 and sizes; at the end the central
 * directory, in its ZIP64 form where a size, an offset or the number of entries passes its 32- or 16-bit field.
 * Our own rather than yazl's for a backup's make (docs/decisions.md "Backups as COPY text"): yazl computes each
 * entry's CRC-32 in JavaScript and passes its bytes through four streams, which at 1,000,000 users was a third
 * of the make's process time; here the CRC is zlib's (native) and the bytes go from the source to deflate to the
 * file. Backpressure holds: a source is read only as fast as the file takes its deflated bytes. yauzl (apply),
 * JSZip and unzip read what it writes.
 */
import fsp from 'node:fs/promises';
import zlib from 'node:zlib';
import { pipeline } from 'node:stream/promises';

const MAX32 = 0xffffffff;
const MAX16 = 0xffff;
/** bit 3: sizes and CRC in the data descriptor after the bytes; bit 11: the name is UTF-8 */
const FLAGS = 0x0008 | 0x0800;
/** regular file, rw-r--r--, in the upper half of the external attributes (made by Unix) */
const FILE_MODE = (0o100644 << 16) >>> 0;
/** the file is written in pieces of about this size (central directory, small entries) */
const WRITE_PIECE = 1 << 16;

/** A date as MS-DOS writes it (local time, 2-second steps; 1980 at the earliest). */
function dosTime(d: Date): { time: number; date: number } {
  const year = Math.max(1980, d.getFullYear());
  return {
    time: (d.getHours() << 11) | (d.getMinutes() << 5) | Math.floor(d.getSeconds() / 2),
    date: ((year - 1980) << 9) | ((d.getMonth() + 1) << 5) | d.getDate(),
  };
}

export interface ZipEntryOptions {
  mtime: Date;
  /** the deflate level (1–9); none: stored as it is */
  level?: number;
}

export class ZipWriter {
  private offset = 0;
  private count = 0;
  private readonly central: Buffer[] = [];

  private constructor(private readonly fh: fsp.FileHandle) {}

  /** A new zip at `file` (replaced if there). */
  static async create(file: string): Promise<ZipWriter> {
    return new ZipWriter(await fsp.open(file, 'w'));
  }

  private async write(b: Buffer): Promise<void> {
    for (let at = 0; at < b.length;) at += (await this.fh.write(b, at, b.length - at)).bytesWritten;
    this.offset += b.length;
  }

  /** Adds the entry `name` of the bytes of `source`, read to its end; answers their size and stored size. */
  async add(
    name: string,
    source: AsyncIterable<Buffer> | Iterable<Buffer>,
    opts: ZipEntryOptions,
  ): Promise<{ size: number; compressed: number }> {
    const nameBytes = Buffer.from(name, 'utf8');
    const start = this.offset;
    const method = opts.level === undefined ? 0 : 8;
    const { time, date } = dosTime(opts.mtime);
    const local = Buffer.alloc(30 + nameBytes.length);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(FLAGS, 6);
    local.writeUInt16LE(method, 8);
    local.writeUInt16LE(time, 10);
    local.writeUInt16LE(date, 12);
    // CRC and sizes (bytes 14–25) are 0 here: the data descriptor holds them
    local.writeUInt16LE(nameBytes.length, 26);
    nameBytes.copy(local, 30);
    await this.write(local);

    let crc = 0;
    let size = 0;
    let compressed = 0;
    const counted = async function* () {
      for await (const chunk of source) {
        crc = zlib.crc32(chunk, crc);
        size += chunk.length;
        yield chunk;
      }
    };
    if (method === 8)
      await pipeline(
        counted(),
        zlib.createDeflateRaw({ level: opts.level, chunkSize: WRITE_PIECE }),
        async (out: AsyncIterable<Buffer>) => {
          for await (const b of out) {
            compressed += b.length;
            await this.write(b);
          }
        },
      );
    else
      for await (const chunk of counted()) {
        compressed += chunk.length;
        await this.write(chunk);
      }

    // the data descriptor: ZIP64's 8-byte sizes when one does not fit in 4
    const big = size >= MAX32 || compressed >= MAX32;
    const dd = Buffer.alloc(big ? 24 : 16);
    dd.writeUInt32LE(0x08074b50, 0);
    dd.writeUInt32LE(crc >>> 0, 4);
    if (big) {
      dd.writeBigUInt64LE(BigInt(compressed), 8);
      dd.writeBigUInt64LE(BigInt(size), 16);
    } else {
      dd.writeUInt32LE(compressed, 8);
      dd.writeUInt32LE(size, 12);
    }
    await this.write(dd);

    // its central directory record, written at the end; ZIP64's extra field holds what does not fit
    const zip64 = big || start >= MAX32;
    const extra = zip64 ? Buffer.alloc(28) : Buffer.alloc(0);
    if (zip64) {
      extra.writeUInt16LE(0x0001, 0);
      extra.writeUInt16LE(24, 2);
      extra.writeBigUInt64LE(BigInt(size), 4);
      extra.writeBigUInt64LE(BigInt(compressed), 12);
      extra.writeBigUInt64LE(BigInt(start), 20);
    }
    const version = zip64 ? 45 : 20;
    const cd = Buffer.alloc(46 + nameBytes.length + extra.length);
    cd.writeUInt32LE(0x02014b50, 0);
    cd.writeUInt16LE((3 << 8) | version, 4);
    cd.writeUInt16LE(version, 6);
    cd.writeUInt16LE(FLAGS, 8);
    cd.writeUInt16LE(method, 10);
    cd.writeUInt16LE(time, 12);
    cd.writeUInt16LE(date, 14);
    cd.writeUInt32LE(crc >>> 0, 16);
    cd.writeUInt32LE(zip64 ? MAX32 : compressed, 20);
    cd.writeUInt32LE(zip64 ? MAX32 : size, 24);
    cd.writeUInt16LE(nameBytes.length, 28);
    cd.writeUInt16LE(extra.length, 30);
    // comment length, disk number, internal attributes: 0
    cd.writeUInt32LE(FILE_MODE, 38);
    cd.writeUInt32LE(zip64 ? MAX32 : start, 42);
    nameBytes.copy(cd, 46);
    extra.copy(cd, 46 + nameBytes.length);
    this.central.push(cd);
    this.count++;
    return { size, compressed };
  }

  /** Writes the central directory and closes the file. */
  async end(): Promise<void> {
    const cdStart = this.offset;
    let piece: Buffer[] = [];
    let pieceSize = 0;
    for (const record of this.central) {
      piece.push(record);
      pieceSize += record.length;
      if (pieceSize >= WRITE_PIECE) {
        await this.write(Buffer.concat(piece, pieceSize));
        piece = [];
        pieceSize = 0;
      }
    }
    if (pieceSize) await this.write(Buffer.concat(piece, pieceSize));
    this.central.length = 0;
    const cdSize = this.offset - cdStart;
    const zip64 = this.count >= MAX16 || cdStart >= MAX32 || cdSize >= MAX32;
    if (zip64) {
      const record = Buffer.alloc(56 + 20);
      const at = this.offset;
      record.writeUInt32LE(0x06064b50, 0);
      record.writeBigUInt64LE(44n, 4);
      record.writeUInt16LE((3 << 8) | 45, 12);
      record.writeUInt16LE(45, 14);
      // this disk, the directory's disk: 0
      record.writeBigUInt64LE(BigInt(this.count), 24);
      record.writeBigUInt64LE(BigInt(this.count), 32);
      record.writeBigUInt64LE(BigInt(cdSize), 40);
      record.writeBigUInt64LE(BigInt(cdStart), 48);
      // the locator
      record.writeUInt32LE(0x07064b50, 56);
      record.writeBigUInt64LE(BigInt(at), 64);
      record.writeUInt32LE(1, 72);
      await this.write(record);
    }
    const eocd = Buffer.alloc(22);
    eocd.writeUInt32LE(0x06054b50, 0);
    eocd.writeUInt16LE(Math.min(this.count, MAX16), 8);
    eocd.writeUInt16LE(Math.min(this.count, MAX16), 10);
    eocd.writeUInt32LE(Math.min(cdSize, MAX32), 12);
    eocd.writeUInt32LE(Math.min(cdStart, MAX32), 16);
    await this.write(eocd);
    await this.fh.close();
  }

  /** Closes the file as it is (the caller removes it). */
  async abort(): Promise<void> {
    await this.fh.close().catch(() => undefined);
  }
}
