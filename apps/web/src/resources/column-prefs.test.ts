import { describe, expect, it } from 'vitest';
import { userResource } from '@lintel/commands';
import {
  fitWidths,
  minFitWidth,
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

describe('fitting the columns to the box (issue 13 point 11)', () => {
  it('squeezes the columns nobody resized so that every column shows, keeping dragged widths', () => {
    const cols = [
      { natural: 84, resized: false },
      { natural: 200, resized: false },
      { natural: 300, resized: true },
      { natural: 280, resized: false },
    ];
    const fit = fitWidths(cols, 700);
    expect(fit.reduce((a, b) => a + b, 0)).toBe(700);
    expect(fit[2]).toBe(300);
    fit.forEach((w, i) => expect(w).toBeLessThanOrEqual(cols[i]!.natural));
    fit.forEach((w, i) => expect(w).toBeGreaterThanOrEqual(minFitWidth(cols[i]!.natural)));
    // the wider a column, the more it gives
    expect(280 - fit[3]!).toBeGreaterThan(84 - fit[0]!);
  });

  it('leaves a table that fits alone, and scrolls one that cannot fit', () => {
    const cols = [
      { natural: 100, resized: false },
      { natural: 200, resized: false },
    ];
    expect(fitWidths(cols, 1000)).toEqual([100, 200]);
    expect(fitWidths(cols, 0)).toEqual([100, 200]);
    expect(fitWidths(cols, 50)).toEqual([72, 72]);
  });
});
