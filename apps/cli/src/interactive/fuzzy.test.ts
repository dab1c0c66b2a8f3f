import { describe, expect, it } from 'vitest';
import { rank, scoreOf, termScore } from './fuzzy';

const items = [
  { titles: ['Create user', 'Создать пользователя'], words: 'users create' },
  { titles: ['List users', 'Список пользователей'], words: 'users list' },
  { titles: ['List roles', 'Список ролей'], words: 'roles list' },
  { titles: ['Show who you are signed in as', 'Показать, под кем выполнен вход'], words: 'whoami' },
];
const texts = (i: (typeof items)[number]) => [...i.titles, i.words];

describe('the palette search', () => {
  it('matches whole words first, then word starts, then letters in order', () => {
    expect(termScore('List users', 'list')).toBeGreaterThan(termScore('List users', 'ist'));
    expect(termScore('List users', 'users')).toBeGreaterThan(termScore('List users', 'sers'));
    expect(termScore('List users', 'lu')).toBeGreaterThan(0);
    expect(termScore('List users', 'zz')).toBe(0);
    // scattered letters in the middle of words are not a match
    expect(termScore('groups save-generated', 'user')).toBe(0);
    expect(termScore('Create user', 'crus')).toBeGreaterThan(0);
  });

  it('needs every word typed, in any of the texts', () => {
    expect(scoreOf(texts(items[1]!), 'us li')).toBeGreaterThan(0);
    expect(scoreOf(texts(items[1]!), 'us zz')).toBe(0);
  });

  it('ranks the best first, in either language, and keeps the order for an empty query', () => {
    expect(rank(items, 'user cr', texts).map((i) => i.words)[0]).toBe('users create');
    expect(rank(items, 'ролей', texts).map((i) => i.words)).toEqual(['roles list']);
    expect(rank(items, 'who', texts)[0]!.words).toBe('whoami');
    expect(rank(items, '', texts)).toEqual(items);
  });
});
