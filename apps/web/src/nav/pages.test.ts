import { describe, expect, it } from 'vitest';
import { getCommand } from '@lintel/commands';
import { evaluateGate } from '@lintel/core';
import { Pages } from './pages';

describe('the pages of a family declared with ui', () => {
  it('puts the anti-passback areas in the Access management menu, gated like their list', () => {
    const list = Pages.find((p) => p.path === '/access-areas')!;
    expect(list).toMatchObject({ section: 'access', menu: true, family: 'access_area', view: 'list' });
    expect(list.gates).toEqual(getCommand('access_area.list').gates);
    const can = (permissions: string[]) => evaluateGate(list.gates, { permissions, licence: {} }).can;
    expect(can(['access_rules.view'])).toBe(true);
    expect(can(['access_rules.view_all'])).toBe(true);
    expect(can(['identifiers.view'])).toBe(false);
    // its add and edit screens are not menu entries
    expect(Pages.filter((p) => p.family === 'access_area' && p.menu)).toHaveLength(1);
  });
});
