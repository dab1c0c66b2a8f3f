import { describe, expect, it } from 'vitest';
import { userResource } from '@lintel/commands';
import {
  defaultWidth,
  loadPrefs,
  MAX_WIDTH,
  MIN_WIDTH,
  savePrefs,
  setWidths,
  storageKeyFor,
  toggleColumn,
  visibleColumns,
  type ColumnInfo,
  type ColumnPrefs,
} from './column-prefs';

class MemoryStorage {
  data = new Map<string, string>();
  getItem(k: string) {
    return this.data.get(k) ?? null;
  }
  setItem(k: string, v: string) {
    this.data.set(k, v);
  }
  removeItem(k: string) {
    this.data.delete(k);
  }
}

const all: ColumnInfo[] = Object.entries(userResource.fields).map(([id, f]) => ({
  id,
  kind: f.kind,
  default: f.default,
  wide: f.wide,
}));
const ids = all.map((c) => c.id);
const defaults = all.filter((c) => c.default).map((c) => c.id);

describe('column preferences', () => {
  it('shows the family defaults when nothing was chosen', () => {
    expect(visibleColumns({ columns: null, widths: {} }, all)).toEqual(defaults);
    expect(defaults).toEqual(['id', 'login', 'name', 'email', 'role', 'domains', 'is_activated']);
    const none = all.map((c) => ({ ...c, default: false }));
    expect(visibleColumns({ columns: null, widths: {} }, none)).toEqual(ids.slice(0, 4));
  });

  it('round-trips through storage under lintel.table.<key>', () => {
    const s = new MemoryStorage();
    let prefs: ColumnPrefs = loadPrefs(s, 'users', ids);
    prefs = toggleColumn(prefs, all, 'phone');
    prefs = toggleColumn(prefs, all, 'email');
    prefs = setWidths(prefs, { name: 333, login: 10, email: 99999 });
    savePrefs(s, 'users', prefs);
    expect([...s.data.keys()]).toEqual([storageKeyFor('users')]);
    const back = loadPrefs(s, 'users', ids);
    expect(back).toEqual({
      columns: ['id', 'login', 'name', 'role', 'domains', 'phone', 'is_activated'],
      widths: { name: 333, login: MIN_WIDTH, email: MAX_WIDTH },
    });
    expect(visibleColumns(back, all)).toEqual(back.columns);
    // another table's key is another choice
    expect(loadPrefs(s, 'groups', ids)).toEqual({ columns: null, widths: {} });
  });

  it('forgets the choice when it equals the defaults again', () => {
    const s = new MemoryStorage();
    let prefs = toggleColumn({ columns: null, widths: {} }, all, 'phone');
    expect(prefs.columns).toContain('phone');
    prefs = toggleColumn(prefs, all, 'phone');
    expect(prefs.columns).toBeNull();
    savePrefs(s, 'users', prefs);
    expect(s.data.size).toBe(0);
  });

  it('keeps the family order and at least one column', () => {
    let prefs: ColumnPrefs = { columns: ['name'], widths: {} };
    prefs = toggleColumn(prefs, all, 'id');
    expect(prefs.columns).toEqual(['id', 'name']);
    prefs = toggleColumn(toggleColumn(prefs, all, 'id'), all, 'name');
    expect(prefs.columns).toEqual(['name']);
  });

  it('drops what an older version stored and survives junk', () => {
    const s = new MemoryStorage();
    s.setItem(
      storageKeyFor('users'),
      JSON.stringify({
        v: 1,
        columns: ['name', 'gone', 'name', 5],
        widths: { name: 'wide', gone: 100, id: 120 },
      }),
    );
    expect(loadPrefs(s, 'users', ids)).toEqual({ columns: ['name'], widths: { id: 120 } });
    s.setItem(storageKeyFor('users'), '{not json');
    expect(loadPrefs(s, 'users', ids)).toEqual({ columns: null, widths: {} });
    s.setItem(storageKeyFor('users'), JSON.stringify({ v: 99, columns: ['name'] }));
    expect(loadPrefs(s, 'users', ids)).toEqual({ columns: null, widths: {} });
    expect(loadPrefs(null, 'users', ids)).toEqual({ columns: null, widths: {} });
    expect(loadPrefs(s, undefined, ids)).toEqual({ columns: null, widths: {} });
    const throwing = {
      getItem: () => {
        throw new Error('blocked');
      },
      setItem: () => {
        throw new Error('full');
      },
      removeItem: () => undefined,
    };
    expect(loadPrefs(throwing, 'users', ids)).toEqual({ columns: null, widths: {} });
    expect(() => savePrefs(throwing, 'users', { columns: ['name'], widths: {} })).not.toThrow();
  });

  it('sizes columns by what they hold', () => {
    expect(defaultWidth({ id: 'id', kind: 'number' })).toBeLessThan(
      defaultWidth({ id: 'name', kind: 'text' }),
    );
    expect(defaultWidth({ id: 'domains', kind: 'refs', wide: true })).toBeGreaterThan(
      defaultWidth({ id: 'name', kind: 'text' }),
    );
    expect(defaultWidth({ id: 'x', width: 77 })).toBe(77);
  });
});
