import { describe, expect, it } from 'vitest';
import { createRunIdGenerator } from '../../src/client/index.ts';
import { runIdTime } from '../../src/client/run-id.ts';
import { RUN_ID_PATTERN } from '../../src/pipeline/index.ts';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const NOW = Date.parse('2026-04-01T10:00:00Z');

describe('run ids (UUIDv7)', () => {
  it('are lowercase UUIDv7 that fit RUN_ID_PATTERN', () => {
    const next = createRunIdGenerator();
    for (let i = 0; i < 100; i++) {
      const id = next();
      expect(id).toMatch(UUID_V7);
      expect(id).toMatch(RUN_ID_PATTERN);
    }
  });

  it('carry their creation time in the first 48 bits', () => {
    expect(runIdTime(createRunIdGenerator(() => NOW)())).toBe(NOW);
  });

  it('increase strictly within one millisecond, across a counter overflow and when the clock steps back', () => {
    let now = NOW;
    const next = createRunIdGenerator(() => now);
    const ids: string[] = [];
    for (let i = 0; i < 5000; i++) ids.push(next()); // more than 4096: the counter must overflow
    now = NOW - 1000;
    ids.push(next(), next());
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('are not guessable from one another', () => {
    const next = createRunIdGenerator(() => NOW);
    const a = next().replace(/-/g, '');
    const b = next().replace(/-/g, '');
    // Same millisecond, consecutive counter: the 62 random bits after the counter still differ.
    expect(a.slice(16)).not.toBe(b.slice(16));
  });
});
