/**
 * The one path every uploaded file takes (issue 12): read at most its kind's bytes, find its type from the
 * bytes (never from the file name or the client's content type) and, for an image, read its dimensions from
 * the header and refuse more pixels than the kind allows — all before anything decodes it. The kinds and their
 * limits are `UploadKinds` of @lintel/core; a command names the kind of each file argument (`fileArg`).
 */
import type { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import { fileTypeFromBuffer } from 'file-type';
import { imageSize } from 'image-size';
import { UploadKinds, type UploadKind, type UploadKindName, type UploadType } from '@lintel/core';
import { AppError } from '../errors';

export interface CheckedUpload {
  /** the type found in the bytes */
  type: UploadType;
  /** images: the dimensions the header announces */
  width?: number;
  height?: number;
}

const IMAGE = /^image\//;

/** Text a licence can be: UTF-8 without NUL or other control bytes but tab, CR and LF. */
function textType(data: Uint8Array): 'text/plain' | 'application/json' | undefined {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(data);
  } catch {
    return undefined;
  }
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(text)) return undefined;
  try {
    JSON.parse(text);
    return 'application/json';
  } catch {
    return 'text/plain';
  }
}

/** The type of a file from its bytes: a known binary signature, else JSON or plain text, else undefined. */
export async function sniffType(data: Uint8Array): Promise<string | undefined> {
  const found = await fileTypeFromBuffer(data);
  if (found)
    return found.mime === 'audio/x-wav' || found.mime === 'audio/vnd.wave' ? 'audio/wav' : found.mime;
  return textType(data);
}

/**
 * Checks a whole file against its kind: its size, its type from the bytes and, for images, the pixel count
 * the header announces. Refusals: `payload_too_large` (bytes or pixels), `invalid_file` (a type the kind does
 * not take), `wrong_file_body` (an image whose header cannot be read).
 */
export async function checkUpload(
  kindName: UploadKindName,
  field: string,
  data: Uint8Array,
): Promise<CheckedUpload> {
  const kind: UploadKind = UploadKinds[kindName];
  if (data.byteLength > kind.maxBytes)
    throw new AppError('payload_too_large', { field, max_bytes: kind.maxBytes });
  const type = await sniffType(data);
  if (!type || !(kind.types as readonly string[]).includes(type))
    throw new AppError(kind.refusal ?? 'invalid_file', { field, types: kind.types.join(', ') });
  if (!IMAGE.test(type)) return { type: type as UploadType };
  let width: number | undefined;
  let height: number | undefined;
  try {
    // a copy of its own: image-size reads through the whole ArrayBuffer, and a pooled Buffer's extends past
    // the file's end, so a cut header would be read from another request's bytes
    ({ width, height } = imageSize(new Uint8Array(data)));
  } catch {
    throw new AppError('wrong_file_body', { field });
  }
  if (!width || !height) throw new AppError('wrong_file_body', { field });
  if (kind.maxPixels !== undefined && width * height > kind.maxPixels)
    throw new AppError('payload_too_large', { field, width, height, max_pixels: kind.maxPixels });
  return { type: type as UploadType, width, height };
}

/**
 * Reads one multipart file part of the given kind into a Blob typed from its bytes. Stops reading (and
 * refuses) as soon as the part passes the kind's size; the rest of the part is drained, never kept.
 */
export async function readUpload(kindName: UploadKindName, field: string, stream: Readable): Promise<Blob> {
  const max = UploadKinds[kindName].maxBytes;
  const chunks: Buffer[] = [];
  let size = 0;
  let over = false;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) over = true;
    if (!over) chunks.push(chunk);
  }
  if (over || (stream as Readable & { truncated?: boolean }).truncated)
    throw new AppError('payload_too_large', { field, max_bytes: max });
  const data = Buffer.concat(chunks);
  const checked = await checkUpload(kindName, field, data);
  return new Blob([new Uint8Array(data)], { type: checked.type });
}

/**
 * A multipart body as plain arguments: fields as strings, each file as a Blob checked against the upload kind
 * its command declares (`files`, by field). A file the command does not declare is refused; a malformed body
 * (no boundary, cut off, bad part headers) is `invalid_data_sent`, never a 500; a field cut at busboy's
 * field size is `payload_too_large`, never silently shortened.
 */
export async function multipartArgs(
  req: FastifyRequest,
  files: Record<string, UploadKindName>,
): Promise<Record<string, unknown>> {
  const maxFile = Math.max(0, ...Object.values(files).map((k) => UploadKinds[k].maxBytes));
  const out: Record<string, unknown> = {};
  // @fastify/multipart ends quietly on a body cut before its close delimiter (it would pass on the parts
  // that came whole): the body's last bytes are kept to check that it ends with `--boundary--`
  const boundary = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(String(req.headers['content-type'] ?? ''));
  const close = `--${boundary?.[1] ?? boundary?.[2] ?? ''}--`;
  let tail = Buffer.alloc(0);
  const keepTail = (chunk: Buffer) => {
    tail = Buffer.concat([tail, chunk]).subarray(-(close.length + 64));
  };
  try {
    const parts = req.parts({
      limits: { fileSize: maxFile + 1, files: Math.max(1, Object.keys(files).length) },
    });
    const it = parts[Symbol.asyncIterator]();
    // the first next() pipes the request into busboy; its data flows from the next tick, so nothing is missed
    let next = it.next();
    req.raw.on('data', keepTail);
    for (let r = await next; !r.done; r = await next) {
      const part = r.value;
      if (part.type === 'file') {
        const kind = files[part.fieldname];
        if (!kind) {
          part.file.resume();
          throw new AppError('invalid_data_sent', { field: part.fieldname });
        }
        out[part.fieldname] = await readUpload(kind, part.fieldname, part.file);
      } else if (part.valueTruncated || part.fieldnameTruncated)
        throw new AppError('payload_too_large', { field: part.fieldname });
      else out[part.fieldname] = part.value;
      next = it.next();
    }
  } catch (err) {
    const e = err as { statusCode?: number };
    if (err instanceof AppError || (e.statusCode && e.statusCode < 500)) throw err;
    // busboy's own failures: "Multipart: Boundary not found", malformed part headers
    throw new AppError('invalid_data_sent');
  } finally {
    req.raw.off('data', keepTail);
  }
  if (!tail.toString('latin1').trimEnd().endsWith(close)) throw new AppError('invalid_data_sent');
  return out;
}
