import fc from 'fast-check';
import { expect, it } from 'vitest';
import { utf8Length } from '../../src/pipeline/phases/parse.ts';

it('counts UTF-8 bytes exactly as TextEncoder does, lone surrogates included', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary' }), (text) => {
      expect(utf8Length(text)).toBe(new TextEncoder().encode(text).length);
    }),
    { numRuns: 2000 },
  );
  for (const text of ['', 'a', 'é', '€', '😀', '\ud800', '\udc00', '\ud800\ud800', '\udc00\ud800']) {
    expect(utf8Length(text)).toBe(new TextEncoder().encode(text).length);
  }
});
