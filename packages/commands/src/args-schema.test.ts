import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Password } from '@lintel/core';
import { getCommand, registry, traitsOf } from './index';

const fieldsOf = (schema: z.ZodType): Record<string, z.ZodType> => {
  const s = schema as unknown as { shape?: Record<string, z.ZodType> };
  return s.shape ?? {};
};

describe('field traits', () => {
  it('are read from the schema through its wrappers', () => {
    expect(traitsOf(Password).secret).toBe(true);
    expect(traitsOf(Password.optional().nullable()).secret).toBe(true);
    expect(traitsOf(z.string()).secret).toBe(false);
    const hidden = z.number().default(1).meta({ hidden: 'why' });
    expect(traitsOf(hidden.optional())).toEqual({
      secret: false,
      multiline: false,
      date: false,
      timeOfDay: false,
      hidden: 'why',
    });
  });

  it('are declared where the registry has them: passwords secret, descriptions multiline, paging hidden', () => {
    expect(traitsOf(fieldsOf(getCommand('user.create').args).password!).secret).toBe(true);
    expect(traitsOf(fieldsOf(getCommand('profile.password').args).old!).secret).toBe(true);
    expect(traitsOf(fieldsOf(getCommand('role.create').args).description!).multiline).toBe(true);
    expect(traitsOf(fieldsOf(getCommand('user.list').args).limit!).hidden).toMatch(/paging/);
    expect(traitsOf(fieldsOf(getCommand('user.list').args).search!).hidden).toBeUndefined();
    // a schedule's window, through its default and the preprocessing that takes `09:00`
    expect(traitsOf(fieldsOf(getCommand('schedule.create').args).time_from!).timeOfDay).toBe(true);
    expect(traitsOf(fieldsOf(getCommand('schedule.create').args).name!).timeOfDay).toBe(false);
  });

  it('leave no password-like argument of the registry unmarked', () => {
    const unmarked: string[] = [];
    for (const cmd of registry.values())
      for (const [key, s] of Object.entries(fieldsOf(cmd.args)))
        if (/password|^old$|^new$/.test(key) && !traitsOf(s).secret) unmarked.push(`${cmd.id}.${key}`);
    expect(unmarked).toEqual([]);
  });
});
