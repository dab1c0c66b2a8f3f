import {
  ErrorCatalogue,
  errorBody,
  fieldErrors,
  type ErrorBody,
  type ErrorKey,
  type FieldError,
} from '@lintel/core';
import type { z, ZodType } from 'zod';

/** A failure the caller caused or may see: a catalogue key, its HTTP status and the message's parameters. */
export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly key: ErrorKey,
    readonly data: Record<string, unknown> | null = null,
    status?: number,
  ) {
    super(key);
    this.status = status ?? ErrorCatalogue[key];
  }
  get body(): ErrorBody {
    return errorBody(this.key, this.data);
  }
}

/** Strings holding NUL, which PostgreSQL text and jsonb cannot store or compare, as field errors. */
function nulFields(value: unknown, path: string[] = [], out: FieldError[] = []): FieldError[] {
  if (typeof value === 'string') {
    if (value.includes('\u0000')) out.push({ field: path.join('.'), rule: 'invalid_value' });
  } else if (Array.isArray(value)) value.forEach((v, i) => nulFields(v, [...path, String(i)], out));
  else if (value !== null && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) {
      if (k.includes('\u0000')) out.push({ field: [...path, k].join('.'), rule: 'invalid_value' });
      else nulFields(v, [...path, k], out);
    }
  return out;
}

/** Parses input with a schema; a failure is `check_fields_data` naming each field and rule. */
export function parseInput<S extends ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) throw new AppError('check_fields_data', { fields: fieldErrors(result.error, input) });
  const nul = nulFields(result.data);
  if (nul.length) throw new AppError('check_fields_data', { fields: nul });
  return result.data;
}
