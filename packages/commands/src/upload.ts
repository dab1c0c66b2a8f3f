import { z } from 'zod';
import type { UploadKindName } from '@lintel/core';

/** The kind each file argument was declared with. */
const kinds = new WeakMap<z.ZodType, UploadKindName>();

/**
 * A file argument of the given upload kind (`@lintel/core` UploadKinds): a Blob in the browser and in Node
 * (the server turns a multipart part into one after checking its size, type and, for images, dimensions).
 */
export function fileArg(kind: UploadKindName) {
  const schema = z.instanceof(Blob, { message: 'file_required' });
  kinds.set(schema, kind);
  return schema;
}

function unwrap(schema: z.ZodType): z.ZodType {
  let s = schema;
  for (;;) {
    const def = (s as unknown as { def: { type: string; innerType?: z.ZodType } }).def;
    if ((def.type === 'optional' || def.type === 'nullable' || def.type === 'default') && def.innerType)
      s = def.innerType;
    else return s;
  }
}

/** The upload kind of a file argument (also optional or nullable), else undefined. */
export function uploadKindOf(schema: z.ZodType): UploadKindName | undefined {
  return kinds.get(unwrap(schema));
}

/** The file arguments of a command's args schema, by field name. */
export function uploadFields(args: z.ZodType): Record<string, UploadKindName> {
  const shape = (unwrap(args) as unknown as { def: { shape?: Record<string, z.ZodType> } }).def.shape;
  const out: Record<string, UploadKindName> = {};
  for (const [field, schema] of Object.entries(shape ?? {})) {
    const kind = uploadKindOf(schema);
    if (kind) out[field] = kind;
  }
  return out;
}
