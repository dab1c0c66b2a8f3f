import { describe, expect, it } from 'vitest';
import { getCommand, userResource } from '@lintel/commands';
import {
  cell,
  defaultColumns,
  projectJson,
  renderRecord,
  renderRows,
  rowsOf,
  table,
  totalText,
  type Look,
} from './render';

const pipe: Look = { tty: false, width: 80, label: (k) => k, yes: 'yes', no: 'no' };
const person: Look = { ...pipe, tty: true, label: (k) => k.replace('_', ' ') };

describe('result shapes', () => {
  it('tells lists, saved records and records from other results', () => {
    expect(rowsOf(getCommand('user.list').result)).toMatchObject({ mode: 'list' });
    expect(rowsOf(getCommand('user.create').result)).toMatchObject({ mode: 'saved' });
    expect(rowsOf(getCommand('user.get').result)).toMatchObject({ mode: 'record' });
    expect(rowsOf(getCommand('group.tree').result)).toMatchObject({ mode: 'rows' });
    expect(rowsOf(getCommand('user.delete').result)).toBeNull();
    expect(rowsOf(getCommand('role.delete_all').result)).toBeNull();
  });

  it('uses the family’s default fields, else every simple field', () => {
    const users = rowsOf(getCommand('user.list').result)!;
    expect(defaultColumns(users, userResource)).toEqual([
      'id',
      'login',
      'name',
      'email',
      'role',
      'domains',
      'is_activated',
    ]);
    const audit = rowsOf(getCommand('audit_event.list').result)!;
    expect(defaultColumns(audit)).toEqual([
      'id',
      'created_at',
      'user',
      'action',
      'entity',
      'entity_name',
      'entity_id',
      'ip',
    ]);
  });

  it('projects --fields in JSON, keeping the shape of the reply', () => {
    const users = rowsOf(getCommand('user.list').result)!;
    const reply = { data: [{ id: 1, login: 'a', name: 'A' }], meta: { total: 1, page: 1, limit: 50 } };
    expect(projectJson(reply, users, ['login', 'id'])).toEqual({
      data: [{ login: 'a', id: 1 }],
      meta: reply.meta,
    });
  });
});

describe('cells and tables', () => {
  it('prints references by name, lists joined, and one line per cell', () => {
    expect(cell({ id: 3, name: 'Admins' }, pipe)).toBe('Admins');
    expect(
      cell(
        [
          { id: 1, name: 'A' },
          { id: 2, name: 'B' },
        ],
        pipe,
      ),
    ).toBe('A, B');
    expect(cell(null, pipe)).toBe('');
    expect(cell(true, pipe)).toBe('true');
    expect(cell(true, person)).toBe('yes');
    expect(cell('a\tb\nc', pipe)).toBe('a b c');
    expect(cell({ users: 2 }, pipe)).toBe('users: 2');
  });

  it('writes a header and tab-separated rows to a pipe', () => {
    const rows = [{ id: 1, name: 'Ann', role: { id: 1, name: 'Admin' } }];
    expect(renderRows(rows, ['id', 'name', 'role'], pipe)).toBe('id\tname\trole\n1\tAnn\tAdmin');
  });

  it('fits a table to the terminal, cutting the widest columns', () => {
    const out = table(['ID', 'DESCRIPTION'], [['1', 'x'.repeat(100)]], 30);
    const lines = out.split('\n');
    expect(lines.every((l) => [...l].length <= 30)).toBe(true);
    expect(lines[1]).toMatch(/^1 {3}x+…$/);
  });

  it('colours yes green and empty or no dim at a colour terminal, keeping the columns aligned', () => {
    const rows = [
      { id: 1, name: 'Ann', is_activated: true, email: 'ann@example.test' },
      { id: 2, name: 'Bob', is_activated: false, email: null },
    ];
    const columns = ['id', 'name', 'is_activated', 'email'];
    const plain = renderRows(rows, columns, person);
    const coloured = renderRows(rows, columns, { ...person, color: true });
    // eslint-disable-next-line no-control-regex
    expect(coloured.replace(/\u001b\[\d+m/g, '')).toBe(plain);
    const [header, ann, bob] = coloured.split('\n');
    expect(header).toContain('\u001b[1mID\u001b[22m');
    expect(ann).toContain('\u001b[32myes\u001b[39m');
    expect(bob).toContain('\u001b[2mno\u001b[22m');
    expect(renderRows(rows, columns, person)).not.toContain('\u001b');
  });

  it('indents trees for a person', () => {
    const tree = [{ id: 1, name: 'Root', children: [{ id: 2, name: 'Block A', children: [] }] }];
    expect(renderRows(tree, ['id', 'name'], person)).toBe('ID  NAME\n1   Root\n2     Block A');
    expect(renderRows(tree, ['id', 'name'], pipe)).toBe('id\tname\n1\tRoot\n2\tBlock A');
  });

  it('shows a record as label and value lines, nested objects dotted, lists of objects as a table', () => {
    const record = { id: 2, profile: { phone: '+49' }, role: { id: 1, name: 'Admin' } };
    expect(renderRecord(record, pipe)).toBe('id\t2\nprofile.phone\t+49\nrole\tAdmin');
    const report = { deleted: [3], not_deleted: [{ id: 1, reason: 'system_role' }] };
    expect(renderRecord(report, person)).toBe('deleted  3\n\nnot deleted:\nID  REASON\n1   system_role');
  });
});

describe('totalText', () => {
  const about = (n: string) => `about ${n}`;
  it('an exact total as it is, an estimate as "about" with three significant digits', () => {
    expect(totalText({ total: 12_345 }, 'en', about)).toBe('12345');
    expect(totalText({ total: 12_345, total_is_estimate: false }, 'en', about)).toBe('12345');
    expect(totalText({ total: 12_345, total_is_estimate: true }, 'en', about)).toBe('about 12,300');
    expect(totalText({ total: 987, total_is_estimate: true }, 'en', about)).toBe('about 987');
    expect(totalText({ total: 12_345, total_is_estimate: true }, 'ru', (n) => `около ${n}`)).toBe(
      'около 12\u00a0300',
    );
  });
});
