import { describe, expect, it, vi } from 'vitest';
import { ApiError } from '@lintel/core';
import { i18next } from '../i18n';
import { describeError, ruleMessage, validateArgs } from './errors';

describe('error messages (spec part 2 §8)', () => {
  it('looks the reply message up in the catalogue with its data', async () => {
    await i18next.changeLanguage('en');
    expect(
      describeError(new ApiError(401, 'incorrect_login_password', 'incorrect_login_password')).message,
    ).toBe('Incorrect login/password');
    expect(
      describeError(new ApiError(422, 'limit_exceeded', 'limit_exceeded', { used: 3, max: 2 })).message,
    ).toBe('Limit exceeded - used 3, max 2');
    // lowercased and without quotes before the lookup
    expect(describeError(new ApiError(400, "'Invalid_Token'", 'x')).message).toBe('Invalid token');
  });

  it('falls back to the error code, then to the default text', () => {
    const logged = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    expect(describeError(new ApiError(400, 'Something the catalogue lacks', 'item_not_found')).message).toBe(
      'Item not found',
    );
    expect(describeError(new ApiError(400, 'nope', 'nope')).message).toBe(
      'Error performing action. Contact support.',
    );
    expect(describeError(new Error('boom')).message).toBe('Error performing action. Contact support.');
    expect(logged).toHaveBeenCalledOnce();
    logged.mockRestore();
  });

  it('marks the one field a catalogue error names', async () => {
    await i18next.changeLanguage('en');
    const failure = describeError(
      new ApiError(409, 'login_already_used', 'login_already_used', { field: 'login' }),
    );
    expect(failure.fields).toEqual({ login: failure.message });
    expect(failure.message).not.toBe('Error performing action. Contact support.');
  });

  it('says counts in a form that reads for any number, in both languages', async () => {
    await i18next.changeLanguage('en');
    expect(ruleMessage({ rule: 'min_items', params: { count: 1 } })).toBe('At least 1 required');
    expect(ruleMessage({ rule: 'max_items', params: { count: 5 } })).toBe('At most 5 allowed');
    await i18next.changeLanguage('ru');
    expect(ruleMessage({ rule: 'min_items', params: { count: 1 } })).toBe('Минимальное количество: 1');
    expect(ruleMessage({ rule: 'max_items', params: { count: 21 } })).toBe('Допустимо не больше 21');
    await i18next.changeLanguage('en');
  });

  it('marks the fields of a check_fields_data reply', () => {
    const err = new ApiError(422, 'check_fields_data', 'check_fields_data', {
      fields: [
        { field: 'login', rule: 'max_length', params: { length: 64 } },
        { field: 'name', rule: 'value_not_unique' },
        { field: 'password', rule: 'no_such_rule' },
      ],
    });
    expect(describeError(err)).toEqual({
      message: 'Check fields data',
      fields: {
        login: 'Maximum length 64 characters',
        name: 'Value is not unique',
        password: 'Invalid value',
      },
    });
  });

  it('checks arguments with the command schema before calling', () => {
    expect(validateArgs('session.login', { login: 'admin', password: 'x' })).toBeNull();
    expect(validateArgs('session.login', { login: '', password: '' })?.fields).toEqual({
      login: 'Field required',
      password: 'Field required',
    });
    expect(validateArgs('password.recovery', { email: 'not-an-address' })?.fields).toEqual({
      email: 'Must be an e-mail address',
    });
  });

  it('speaks Russian too', async () => {
    await i18next.changeLanguage('ru');
    try {
      expect(
        describeError(new ApiError(401, 'incorrect_login_password', 'incorrect_login_password')).message,
      ).toBe('Неверный логин или пароль');
      expect(ruleMessage({ rule: 'required' })).toBe('Обязательное поле');
    } finally {
      await i18next.changeLanguage('en');
    }
  });

  it('names the fields a form message is about, and the field a duplicate is in (issue 13 item 10)', async () => {
    await i18next.changeLanguage('en');
    const checked = validateArgs('user.create', {
      login: '',
      name: 'x'.repeat(300),
      role: 1,
      domains: [1],
    } as never);
    expect(checked?.message).toMatch(/^Check fields data: .*Login.*Name|^Check fields data: .*Name.*Login/);
    // an empty login is missing, not too short
    expect(checked?.fields.login).toBe('Field required');
    const duplicate = describeError(
      new ApiError(409, 'value_not_unique', 'value_not_unique', { field: 'name' }),
      'marker.create',
    );
    expect(duplicate.message).toBe('Value is not unique: Name');
    expect(duplicate.fields).toEqual({ name: 'Value is not unique' });
  });

  it('writes a least and most length in Russian that reads for any number', async () => {
    await i18next.changeLanguage('ru');
    try {
      for (const n of [1, 3, 5, 21, 255]) {
        expect(ruleMessage({ rule: 'min_length', params: { length: n } })).toBe(`Не меньше символов: ${n}`);
        expect(ruleMessage({ rule: 'max_length', params: { length: n } })).toBe(`Не больше символов: ${n}`);
      }
    } finally {
      await i18next.changeLanguage('en');
    }
  });
});
