import { describe, expect, it } from 'vitest';
import { resources } from '@lintel/locales';
import { ErrorCatalogue } from './errors';

describe('the error catalogue', () => {
  it('has a message in every language for every key the server may send', () => {
    for (const lang of ['en', 'ru'] as const) {
      const http = resources[lang].errors.http as Record<string, string>;
      expect(Object.keys(ErrorCatalogue).filter((k) => !http[k])).toEqual([]);
    }
  });
});
