import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeButtonValue, parseButtonValue } from '../../views/button-value.ts';

describe('button values', () => {
  it('encode run and version (and step) compactly', () => {
    expect(encodeButtonValue({ runId: 'run-freight-1', version: 2 })).toBe('{"r":"run-freight-1","v":2}');
    expect(encodeButtonValue({ runId: 'run-freight-1', version: 2, stepId: 's4' })).toBe(
      '{"r":"run-freight-1","v":2,"s":"s4"}',
    );
  });

  it('parse back what they encode, within Slack’s 2000 characters', () => {
    const id = (max: number) => fc.stringMatching(new RegExp(`^[A-Za-z0-9][A-Za-z0-9_-]{0,${max - 1}}$`));
    fc.assert(
      fc.property(
        id(128),
        fc.integer({ min: 1, max: 1e9 }),
        fc.option(id(64), { nil: undefined }),
        (runId, version, stepId) => {
          const value = { runId, version, ...(stepId === undefined ? {} : { stepId }) };
          const text = encodeButtonValue(value);
          expect(text.length).toBeLessThanOrEqual(2000);
          expect(parseButtonValue(text)).toEqual({ ok: true, value });
        },
      ),
    );
  });

  it('refuse values this app did not write', () => {
    for (const text of [
      '',
      'approve',
      '{"r":"x"}',
      '{"r":"x","v":0}',
      '{"r":"x","v":1,"extra":1}',
      '{"r":"a b","v":1}',
    ]) {
      expect(parseButtonValue(text)).toMatchObject({ ok: false });
    }
  });
});
