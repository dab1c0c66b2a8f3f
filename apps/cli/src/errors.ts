import { CommanderError } from 'commander';
import {
  ApiError,
  errorLookupKey,
  isUnauthenticated,
  REFUSED_VALUE_ERRORS,
  type ErrorBody,
  type FieldError,
} from '@lintel/core';
import { ExitCode } from './exit-codes';
import { hasText, tr } from './i18n';
import { synonymOf } from './synonyms';

/**
 * A failure the CLI itself finds. `key` is a catalogue key: in the `cli` namespace under `errors.`, or in
 * the server's `errors` namespace under `http.` (e.g. `check_fields_data` of arguments checked locally).
 */
export class CliError extends Error {
  constructor(
    readonly key: string,
    readonly exitCode: ExitCode,
    readonly data: Record<string, unknown> | null = null,
    readonly namespace: 'cli' | 'errors' = 'cli',
  ) {
    super(key);
    this.name = 'CliError';
  }
}

/** How a failure is shown: the reply-shaped body for `--json`, the translated text for a person, the exit code. */
export interface Failure {
  /** for `--json`: `{message, error_code, data}`, the message in words as a person reads it */
  body: ErrorBody;
  /** an error reply's body as the server sent it (`lintel api` prints that) */
  raw?: ErrorBody;
  text: string;
  exitCode: ExitCode;
}

/** Arrays read better joined in a sentence; the JSON body keeps them as arrays. */
function textParams(data: Record<string, unknown> | null): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(data ?? {}).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : v]),
  );
}

function isFieldErrorList(v: unknown): v is FieldError[] {
  return (
    Array.isArray(v) &&
    v.every((f) => f && typeof f === 'object' && typeof f.field === 'string' && typeof f.rule === 'string')
  );
}

/** `  field: rule text` lines for a `check_fields_data` failure (`errors:validation.<rule>`). */
function fieldLines(data: Record<string, unknown> | null): string[] {
  if (!isFieldErrorList(data?.fields)) return [];
  return data.fields.map((f) => {
    const key = `errors:validation.${f.rule}`;
    const text = tr(hasText(key, f.params) ? key : 'errors:validation.invalid_value', f.params ?? {});
    // `one_of` names the values it allows
    const values =
      Array.isArray(f.params?.values) && f.params.values.length ? `: ${f.params.values.join(', ')}` : '';
    return `  ${f.field}: ${text}${values}`;
  });
}

/** The lookup of spec part 2 §8: the message, then the error code, under `errors:http.`; else `errors:default`. */
function apiText(err: ApiError): string {
  for (const candidate of [errorLookupKey(err.message), errorLookupKey(err.code)]) {
    const key = `errors:http.${candidate}`;
    if (candidate && hasText(key)) return tr(key, textParams(err.data));
  }
  return tr('errors:default');
}

function apiExitCode(err: ApiError): ExitCode {
  if (isUnauthenticated(err.status, err.body) || (err.status === 401 && err.code === 'invalid_token'))
    return ExitCode.signedOut;
  if (err.status === 403) return ExitCode.refused;
  if (err.status === 404) return ExitCode.notFound;
  // the server found a field the CLI could not check (an unknown sort field, a taken value's format): usage
  if (err.status === 422 && err.code === 'check_fields_data') return ExitCode.usage;
  // a value the caller gave is taken or names nothing (core's REFUSED_VALUE_ERRORS): bad usage as well,
  // which the README's table of exit codes promises
  if ((REFUSED_VALUE_ERRORS as ReadonlySet<string>).has(err.code)) return ExitCode.usage;
  return ExitCode.error;
}

const commanderKeys: Record<string, string> = {
  'commander.unknownOption': 'unknown_option',
  'commander.unknownCommand': 'unknown_command',
  'commander.missingArgument': 'missing_argument',
  'commander.optionMissingArgument': 'option_missing_argument',
  'commander.missingMandatoryOptionValue': 'missing_option',
  'commander.excessArguments': 'excess_arguments',
  'commander.conflictingOption': 'conflicting_option',
};

/** Commander's English parse errors as translated usage errors (the quoted names are the parameters). */
export function fromCommander(err: CommanderError): CliError {
  const [name, other] = [...err.message.matchAll(/'([^']+)'/g)].map((m) => m[1]);
  const key = commanderKeys[err.code];
  if (!key) return new CliError('bad_usage', ExitCode.usage, { detail: err.message.replace(/^error: /, '') });
  // commander suggests one word (`Did you mean list?`) or several (`Did you mean one of user, users?`)
  const suggestion =
    /Did you mean (?:one of )?([^?]+)\?/.exec(err.message)?.[1] ??
    (err.code === 'commander.unknownCommand' && name ? synonymOf(name) : undefined);
  return new CliError(key, ExitCode.usage, {
    name,
    ...(other ? { other } : {}),
    ...(suggestion ? { suggestion } : {}),
  });
}

export function describeFailure(err: unknown): Failure {
  if (err instanceof CommanderError) return describeFailure(fromCommander(err));
  if (err instanceof CliError) {
    const key = err.namespace === 'cli' ? `cli:errors.${err.key}` : `errors:http.${err.key}`;
    const lines = [tr(key, textParams(err.data)), ...fieldLines(err.data)];
    if (Array.isArray(err.data?.permissions) && err.data.permissions.length)
      lines.push(tr('cli:errors.needs_permission', { permissions: err.data.permissions.join(', ') }));
    if (typeof err.data?.suggestion === 'string')
      lines.push(tr('cli:errors.did_you_mean', { suggestion: err.data.suggestion }));
    return {
      body: { message: lines.join('\n'), error_code: err.key, data: err.data },
      text: lines.join('\n'),
      exitCode: err.exitCode,
    };
  }
  if (err instanceof ApiError) {
    const text = [apiText(err), ...fieldLines(err.data)].join('\n');
    return {
      // the reply's body with its message in words (the code is `error_code`); `raw` keeps it as sent
      body: { ...err.body, message: text },
      raw: err.body,
      text,
      exitCode: apiExitCode(err),
    };
  }
  const detail = process.env.LINTEL_DEBUG ? `\n${(err as Error)?.stack ?? String(err)}` : '';
  return {
    body: { message: tr('errors:default'), error_code: 'internal_error', data: null },
    text: tr('errors:default') + detail,
    exitCode: ExitCode.error,
  };
}
