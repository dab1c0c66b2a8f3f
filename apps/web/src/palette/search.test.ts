import { describe, expect, it } from 'vitest';
import en from '../../../../locales/en/commands.json';
import ru from '../../../../locales/ru/commands.json';
import { parseEntityQuery, rank, rankWithFound, scoreOf, tierOf } from './search';

const words = {
  open: ['open', 'открыть', 'открой'],
  families: {
    user: ['users', 'user', 'пользователя', 'пользователь'],
    group: ['groups', 'group', 'группу', 'группа'],
    role: ['roles', 'role', 'роль'],
    marker: ['marker', 'маркер'],
    domain_type: ['group type', 'тип группы'],
    device: ['device', 'устройство'],
    sip_number: ['virtual number', 'виртуальный номер'],
    forward_rule: ['forward rule', 'правило переадресации'],
    sip_trunk: ['sip trunk', 'SIP-транк'],
    schedule: ['schedule', 'расписание'],
    holiday: ['holiday', 'праздник'],
    access_rule: ['access rule', 'правило доступа'],
    access_area: ['anti-passback area', 'зона антипассбэка'],
    identifier: ['identifier', 'идентификатор'],
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

  it('puts the person named what was typed above commands that match by scattered letters (issue 13 point 6)', () => {
    // every command of the registry, as the palette lists them, in both languages
    const labels = (l: Record<string, unknown>) =>
      Object.entries(l)
        .filter(([, v]) => v && typeof v === 'object' && typeof (v as { label?: unknown }).label === 'string')
        .map(([id, v]) => ({ id, label: (v as { label: string }).label }));
    const ruById = new Map(labels(ru).map((c) => [c.id, c.label]));
    const commands = labels(en).map((c) => ({
      id: c.id,
      titles: [c.label, ruById.get(c.id) ?? c.label],
      keywords: [c.id],
    }));
    expect(commands.length).toBeGreaterThan(30);
    // rows the server found by name come after the commands, as the palette lists them
    const people = [
      { id: 'user:7', titles: ['Anna Kowalska'], keywords: ['akowalska'] },
      { id: 'user:8', titles: ['Joanna Nowak'], keywords: ['jnowak'] },
    ];
    const items = [...commands, ...people];
    const keyed = <T extends { id: string }>(xs: T[]) => xs.map((x) => ({ ...x, key: x.id }));
    const listed = rankWithFound(keyed(commands), keyed(people), 'anna');
    expect(listed.best[0]!.id).toBe('user:7');
    // a row found by its login only still shows, after the matches
    expect(rankWithFound(keyed(commands), keyed(people), 'jnow').best.map((i) => i.id)).toContain('user:8');
    expect(rank(items, 'anna')[0]!.id).toBe('user:7');
    // "sergei" and "anna" match commands by scattered letters; the person named so still comes first
    const sergei = { id: 'user:9', key: 'user:9', titles: ['Sergei Kowalski'] };
    expect(rank([...commands, sergei], 'sergei')[0]!.id).toBe('user:9');
    expect(rank(items, 'Anna Kow')[0]!.id).toBe('user:7');
    expect(rank(items, 'kowalska')[0]!.id).toBe('user:7');
    expect(rank(items, 'nowak')[0]!.id).toBe('user:8');
    // a command typed by its words still comes first, and scattered letters still find commands
    expect(rank(items, 'create user')[0]!.id).toBe('user.create');
    expect(rank(items, 'crus').map((i) => i.id)).toContain('user.create');
    expect(rank(items, 'usr').map((i) => i.id)).toContain('user.create');
    // a whole word no title starts finds nothing, not what happens to hold its letters (issue 25 item 10)
    for (const word of ['call', 'door', 'dial', 'intercom'])
      for (const found of rank(items, word))
        expect(tierOf(found, word), `${word} found ${found.titles[0]}`).toBe(2);
    expect(rank(items, 'zebra')).toEqual([]);
    expect(tierOf(people[0]!, 'ann kow')).toBe(2);
    expect(
      tierOf(
        commands.find((c) => c.id === 'user.create')!,
        'anna',
      ),
    ).toBe(1);
  });
});
