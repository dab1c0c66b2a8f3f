import { describe, expect, it } from 'vitest';
import { parseEntityQuery, rank, scoreOf } from './search';

const words = {
  open: ['open', 'открыть', 'открой'],
  families: {
    user: ['users', 'user', 'пользователя', 'пользователь'],
    group: ['groups', 'group', 'группу', 'группа'],
    role: ['roles', 'role', 'роль'],
    marker: ['marker', 'маркер'],
    domain_type: ['group type', 'тип группы'],
  },
};

describe('palette search', () => {
  const items = [
    { id: 'users', titles: ['Users', 'Пользователи'] },
    { id: 'create-user', titles: ['Create user', 'Создать пользователя'], keywords: ['user.create'] },
    { id: 'roles', titles: ['Roles', 'Роли'] },
    { id: 'groups', titles: ['Groups', 'Группы'] },
  ];

  it('matches the title in either language, whatever the interface language', () => {
    expect(rank(items, 'польз').map((i) => i.id)).toEqual(expect.arrayContaining(['users', 'create-user']));
    expect(rank(items, 'роли')[0]!.id).toBe('roles');
    expect(rank(items, 'grps')[0]!.id).toBe('groups');
    expect(rank(items, 'crus')[0]!.id).toBe('create-user');
    expect(rank(items, 'zzz')).toEqual([]);
    expect(rank(items, '')).toHaveLength(4);
    expect(scoreOf(items[1]!, 'user.create')).toBeGreaterThan(0);
  });

  it('reads which family to search and what for', () => {
    const all = ['user', 'group', 'role'] as const;
    expect(parseEntityQuery('open user Anna K', words, all)).toEqual({ families: ['user'], text: 'Anna K' });
    expect(parseEntityQuery('открыть группу Дом 3', words, all)).toEqual({
      families: ['group'],
      text: 'Дом 3',
    });
    expect(parseEntityQuery('Anna', words, all)).toEqual({
      families: ['user', 'group', 'role'],
      text: 'Anna',
    });
    expect(parseEntityQuery('open user', words, all)).toBeNull();
    expect(parseEntityQuery('a', words, all)).toBeNull();
    // a family the user may not see is not a prefix word
    expect(parseEntityQuery('role admin', words, ['user'])).toEqual({
      families: ['user'],
      text: 'role admin',
    });
  });
});
