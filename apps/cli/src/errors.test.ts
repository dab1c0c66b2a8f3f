import { CommanderError } from 'commander';
import { describe, expect, it } from 'vitest';
import {
  ApiError,
  ErrorCatalogue,
  REFUSED_VALUE_ERRORS,
  STATE_CONFLICT_ERRORS,
  type ErrorKey,
} from '@lintel/core';
import { CliError, describeFailure } from './errors';
import { ExitCode } from './exit-codes';

describe('failures', () => {
  it('maps API statuses to exit codes and catalogue texts', () => {
    const cases: Array<[ApiError, number, string]> = [
      [
        new ApiError(401, 'Unauthenticated', 'not_authorized'),
        ExitCode.signedOut,
        'Your session has ended. Sign in again',
      ],
      [
        new ApiError(401, 'incorrect_login_password', 'incorrect_login_password'),
        ExitCode.error,
        'Incorrect login/password',
      ],
      [
        new ApiError(403, 'method_prohibited', 'method_prohibited'),
        ExitCode.refused,
        'Method or action is prohibited',
      ],
      [new ApiError(404, 'item_not_found', 'item_not_found'), ExitCode.notFound, 'Item not found'],
      [
        new ApiError(422, 'limit_exceeded', 'limit_exceeded', { used: 5, max: 5 }),
        ExitCode.error,
        'Limit exceeded - used 5, max 5',
      ],
      [
        new ApiError(422, 'check_fields_data', 'check_fields_data', {
          fields: [{ field: 'sort', rule: 'one_of', params: { values: ['id', 'name'] } }],
        }),
        ExitCode.usage,
        'Check fields data\n  sort: Choose one of the allowed values: id, name',
      ],
      [
        new ApiError(500, 'something else', 'weird'),
        ExitCode.error,
        'Error performing action. Contact support.',
      ],
    ];
    for (const [err, exitCode, text] of cases) {
      // --json prints the body with the message in words; `raw` is the reply's body as sent
      expect(describeFailure(err)).toEqual({
        body: { ...err.body, message: text },
        raw: err.body,
        exitCode,
        text,
      });
    }
  });

  it('exits 2 for every value taken or naming nothing, 1 for the state of the platform (issue 25 item 10: a duplicate serial exited 1, a duplicate login 2)', () => {
    const conflicts = Object.entries(ErrorCatalogue).filter(([, status]) => status === 409);
    for (const [key] of conflicts) {
      const code = key as ErrorKey;
      // each 409 is placed: a value the caller gave, or the platform's state
      expect(REFUSED_VALUE_ERRORS.has(code) !== STATE_CONFLICT_ERRORS.has(code), key).toBe(true);
      expect(describeFailure(new ApiError(409, key, key)).exitCode, key).toBe(
        REFUSED_VALUE_ERRORS.has(code) ? ExitCode.usage : ExitCode.error,
      );
    }
    expect(describeFailure(new ApiError(409, 'serial_number_in_use', 'serial_number_in_use')).exitCode).toBe(
      ExitCode.usage,
    );
    expect(describeFailure(new ApiError(409, 'login_already_used', 'login_already_used')).exitCode).toBe(
      ExitCode.usage,
    );
  });

  it('lists field rules under check_fields_data', () => {
    const err = new CliError(
      'check_fields_data',
      ExitCode.usage,
      { fields: [{ field: 'name', rule: 'max_length', params: { length: 3 } }] },
      'errors',
    );
    expect(describeFailure(err).text).toBe('Check fields data\n  name: Maximum length 3 characters');
    // a rule with a count
    const plural = new CliError(
      'check_fields_data',
      ExitCode.usage,
      { fields: [{ field: 'domains', rule: 'min_items', params: { count: 1 } }] },
      'errors',
    );
    expect(describeFailure(plural).text).toBe('Check fields data\n  domains: At least 1 required');
  });

  it('names the permissions a refused command needs', () => {
    const err = new CliError(
      'method_prohibited',
      ExitCode.refused,
      { command: 'role.create', permissions: ['roles.create'] },
      'errors',
    );
    expect(describeFailure(err)).toMatchObject({
      body: {
        error_code: 'method_prohibited',
        data: { command: 'role.create', permissions: ['roles.create'] },
      },
      text: 'Method or action is prohibited\nIt needs one of the permissions: roles.create',
      exitCode: ExitCode.refused,
    });
  });

  it('translates commander usage errors, with the suggestion', () => {
    const err = new CommanderError(
      1,
      'commander.unknownOption',
      "error: unknown option '--jsn'\n(Did you mean --json?)",
    );
    expect(describeFailure(err)).toMatchObject({
      body: { error_code: 'unknown_option', data: { name: '--jsn', suggestion: '--json' } },
      text: 'Unknown option --jsn.\nDid you mean --json?',
      exitCode: ExitCode.usage,
    });
  });
});
