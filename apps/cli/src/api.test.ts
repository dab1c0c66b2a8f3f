import { describe, expect, it } from 'vitest';
import { normaliseServer } from './api';
import { CliError } from './errors';

describe('server addresses', () => {
  it('are normalised to an origin and path, http by default', () => {
    expect(normaliseServer('localhost:8080')).toBe('http://localhost:8080');
    expect(normaliseServer('https://x.example/lintel/')).toBe('https://x.example/lintel');
    expect(() => normaliseServer('ftp://x')).toThrow(CliError);
  });
});
