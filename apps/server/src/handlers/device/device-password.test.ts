import { describe, expect, it } from 'vitest';
import { issuePassword } from './device.store';

describe('a password Lintel issues a device', () => {
  it('is 24 letters and digits: nothing a panel keypad, a shell or a command line (a leading -) trips on', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const p = issuePassword();
      expect(p).toMatch(/^[A-Za-z0-9]{24}$/);
      seen.add(p);
    }
    expect(seen.size).toBe(2000);
  });
});
