import { describe, expect, it } from 'vitest';
import { parseKey, setField } from './fields';
import { splitPath } from './api';

describe('lintel api: paths and fields', () => {
  it('takes the path with or without /api/v0, and its query', () => {
    expect(splitPath('/users')).toEqual({ path: '/users', query: {} });
    expect(splitPath('users/5')).toEqual({ path: '/users/5', query: {} });
    expect(splitPath('/api/v0/users?limit=5&page=2')).toEqual({
      path: '/users',
      query: { limit: '5', page: '2' },
    });
    expect(splitPath('api/v0')).toEqual({ path: '/', query: {} });
  });

  it('reads keys as gh api does: name, name[sub], name[]', () => {
    expect(parseKey('name')).toEqual(['name']);
    expect(parseKey('profile[phone]')).toEqual(['profile', 'phone']);
    expect(parseKey('ids[]')).toEqual(['ids', null]);
    expect(parseKey('a[][b]')).toBeNull();
    expect(parseKey('[x]')).toBeNull();
  });

  it('types --field values and keeps --raw-field values strings', () => {
    const args: Record<string, unknown> = {};
    for (const f of [
      'n=5',
      'on=true',
      'off=false',
      'none=null',
      'code=007',
      'text=hello world',
      'ids[]=1',
      'ids[]=2',
      'profile[phone]=+1',
    ])
      setField(args, f, true);
    setField(args, 'raw=5', false);
    expect(args).toEqual({
      n: 5,
      on: true,
      off: false,
      none: null,
      code: '007',
      text: 'hello world',
      ids: [1, 2],
      profile: { phone: '+1' },
      raw: '5',
    });
    expect(() => setField({}, 'novalue', true)).toThrow('bad_field');
    expect(() => setField({}, '=x', true)).toThrow('bad_field');
  });
});
