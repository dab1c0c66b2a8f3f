import type { z } from 'zod';
import type { FieldError } from './errors';

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let cur: unknown = input;
  for (const key of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[key];
  }
  return cur;
}

/**
 * Turns zod issues into the generic field rules of spec part 2 §5, so every surface names the same
 * rule for the same failure: `required`, `max_length {length}`, `min_length {length}`, `email`, ...
 */
export function fieldErrors(error: z.ZodError, input: unknown): FieldError[] {
  const out: FieldError[] = [];
  for (const issue of error.issues) {
    const field = issue.path.map(String).join('.');
    const value = valueAt(input, issue.path);
    switch (issue.code) {
      case 'invalid_type':
        out.push(
          value === undefined || value === null
            ? { field, rule: 'required' }
            : { field, rule: 'invalid_type', params: { expected: issue.expected } },
        );
        break;
      case 'too_big':
        if (issue.origin === 'string')
          out.push({ field, rule: 'max_length', params: { length: Number(issue.maximum) } });
        else if (issue.origin === 'array' || issue.origin === 'set')
          out.push({ field, rule: 'max_items', params: { count: Number(issue.maximum) } });
        else out.push({ field, rule: 'less_or_equal', params: { max: Number(issue.maximum) } });
        break;
      case 'too_small':
        if (issue.origin === 'string')
          out.push(
            // an empty value is missing, whatever its least length (issue 13 item 10: "required", not "minimum 3")
            Number(issue.minimum) <= 1 || (typeof value === 'string' && value.trim() === '')
              ? { field, rule: 'required' }
              : { field, rule: 'min_length', params: { length: Number(issue.minimum) } },
          );
        else if (issue.origin === 'array' || issue.origin === 'set')
          out.push({ field, rule: 'min_items', params: { count: Number(issue.minimum) } });
        else out.push({ field, rule: 'greater_or_equal', params: { min: Number(issue.minimum) } });
        break;
      case 'invalid_format':
        if (issue.format === 'email') out.push({ field, rule: 'email' });
        else if (issue.format === 'url') out.push({ field, rule: 'url' });
        else
          out.push({
            field,
            rule: issue.message && /^[a-z_]+$/.test(issue.message) ? issue.message : 'invalid_format',
          });
        break;
      case 'invalid_value':
        out.push({ field, rule: 'one_of', params: { values: issue.values.map(String) } });
        break;
      case 'unrecognized_keys':
        for (const key of issue.keys)
          out.push({ field: field ? `${field}.${key}` : key, rule: 'unknown_field' });
        break;
      default:
        out.push({
          field,
          rule: issue.message && /^[a-z_]+$/.test(issue.message) ? issue.message : 'invalid_value',
        });
    }
  }
  return out;
}
