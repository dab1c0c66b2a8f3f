/**
 * What never reaches a log, wherever it appears (docs/decisions.md "Event and system logs"): the values of
 * fields named like a secret at any depth (a device's, a SIP number's or a trunk's password, tokens, codes,
 * keys) and secrets written into text (`access_token=…` in a link, `password=…`, an Authorization header's
 * credentials). pino's `redact` names fields at fixed paths; this walks the whole object, and is applied again
 * to each line a log file is given and each line it serves (Kamailio's output is text nobody shaped).
 */

export const REDACTED = '[redacted]';

/** Field names whose values are secrets (compared in lower case, `-` read as `_`). */
const SECRET_FIELD =
  /(^|_)(password|passwd|pass|secret|token|refresh|authorization|cookie|ha1|ha1b|api_key|apikey|private_key|credentials?|signature)$|^(user_password|device_password|x_device_password|set_cookie)$/;
/** Names that are secrets when they hold text (a confirmation code, a password change), not a number (an exit code). */
const SECRET_TEXT_FIELD = /^(code|old|new)$/;

/** Secrets written into text: `key=value` pairs (query strings, Kamailio's lines), auth headers, JSON pairs. */
const TEXT_PATTERNS: Array<[RegExp, string]> = [
  [
    /\b((?:access_|refresh_)?token|password|passwd|secret|ha1|api_?key|sig(?:nature)?)=([^&\s"',;]+)/gi,
    `$1=${REDACTED}`,
  ],
  [/\b(Bearer|Basic|Digest)\s+[A-Za-z0-9._~+/=-]{6,}[^\s"]*/g, `$1 ${REDACTED}`],
  [/"((?:[a-z]+_)?(?:password|secret|token|refresh|ha1))"\s*:\s*"(?:[^"\\]|\\.)*"/gi, `"$1":"${REDACTED}"`],
];

export const isSecretField = (key: string, value?: unknown) => {
  const k = key.toLowerCase().replace(/-/g, '_');
  return SECRET_FIELD.test(k) || (typeof value === 'string' && SECRET_TEXT_FIELD.test(k));
};

export function scrubText(text: string): string {
  let out = text;
  for (const [re, to] of TEXT_PATTERNS) out = out.replace(re, to);
  return out;
}

const isPlain = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' &&
  v !== null &&
  (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null);

/**
 * A copy of `value` without secrets: secret fields' values replaced, strings scrubbed, plain objects and
 * arrays walked (to a depth; deeper is dropped), anything else (an Error, a Buffer) left to pino's serializers.
 */
export function scrubValue(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return scrubText(value);
  if (depth > 8) return '[deep]';
  if (Array.isArray(value)) return value.map((v) => scrubValue(v, depth + 1));
  if (value instanceof Error) {
    const e = new Error(scrubText(value.message));
    e.name = value.name;
    e.stack = value.stack ? scrubText(value.stack) : undefined;
    return e;
  }
  if (!isPlain(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value))
    out[k] =
      isSecretField(k, v) && v !== null && v !== undefined && v !== '' ? REDACTED : scrubValue(v, depth + 1);
  return out;
}

/** One line of a log file, scrubbed: a JSON line walked as a value, any other line as text. */
export function scrubLine(line: string): string {
  if (line.startsWith('{')) {
    try {
      return JSON.stringify(scrubValue(JSON.parse(line)));
    } catch {
      // not JSON after all: scrubbed as text
    }
  }
  return scrubText(line);
}
