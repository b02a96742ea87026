import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration } from '../../src/config/duration.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

describe('parseDuration', () => {
  it.each([
    ['15m', 15 * MINUTE],
    ['24h', 24 * HOUR],
    ['1h30m', HOUR + 30 * MINUTE],
    ['500ms', 500],
    ['7d', 7 * DAY],
    ['45s', 45_000],
    ['1s1ms', 1001],
    ['1m1ms', MINUTE + 1],
    ['1d2h3m4s5ms', DAY + 2 * HOUR + 3 * MINUTE + 4000 + 5],
    ['90m', 90 * MINUTE],
    ['01h', HOUR],
    ['0s', 0],
  ])('reads %j as %i ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each([
    ['', 'empty'],
    ['10', 'a number without a unit'],
    ['1.5h', 'a fraction'],
    ['m', 'a unit without a number'],
    ['15 m', 'a space inside'],
    [' 15m', 'a leading space'],
    ['-5m', 'a negative'],
    ['+5m', 'a plus sign'],
    ['15M', 'an upper-case unit'],
    ['15 minutes', 'a spelled-out unit'],
    ['15min', 'an unknown unit'],
    ['1w', 'weeks'],
    ['5mss', 'trailing garbage'],
    ['1h 30m', 'spaces between parts'],
    ['1e3ms', 'exponent notation'],
    ['１５m', 'full-width digits'],
  ])('refuses %j (%s)', (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });

  it('refuses a unit given twice rather than adding them up ("1h1h" is a typo, not 2h)', () => {
    expect(parseDuration('1h1h')).toBeUndefined();
    expect(parseDuration('30m30m')).toBeUndefined();
  });

  it('refuses units out of order ("30m1h" is more likely a slip than 1h30m)', () => {
    expect(parseDuration('30m1h')).toBeUndefined();
    expect(parseDuration('1ms1s')).toBeUndefined();
    expect(parseDuration('5s2m')).toBeUndefined();
  });

  it('refuses durations too long to be exact and absurdly long text', () => {
    expect(parseDuration('99999999999999999999d')).toBeUndefined();
    expect(parseDuration(`${'0'.repeat(40)}1s`)).toBeUndefined();
  });

  it('reads the longest exact duration', () => {
    expect(parseDuration(`${Number.MAX_SAFE_INTEGER}ms`)).toBe(Number.MAX_SAFE_INTEGER);
    expect(parseDuration(`${Number.MAX_SAFE_INTEGER + 1}ms`)).toBeUndefined();
  });

  it('gives the same answer however often it is called (no leftover regex state)', () => {
    expect([parseDuration('1h30m'), parseDuration('1h1h'), parseDuration('1h30m')]).toEqual([
      HOUR + 30 * MINUTE,
      undefined,
      HOUR + 30 * MINUTE,
    ]);
  });
});

describe('formatDuration', () => {
  it('writes durations the way config does', () => {
    expect(formatDuration(15 * MINUTE)).toBe('15m');
    expect(formatDuration(HOUR + 30 * MINUTE)).toBe('1h30m');
    expect(formatDuration(7 * DAY)).toBe('7d');
    expect(formatDuration(500)).toBe('500ms');
    expect(formatDuration(DAY + HOUR + MINUTE + 1000 + 1)).toBe('1d1h1m1s1ms');
    expect(formatDuration(0)).toBe('0s');
  });

  it('refuses negative, fractional and non-finite values instead of writing nonsense', () => {
    for (const bad of [-5, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => formatDuration(bad)).toThrow(expect.objectContaining({ code: 'invalid_argument' }));
    }
  });

  it('round-trips through parseDuration for every safe non-negative integer', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), (ms) => {
        expect(parseDuration(formatDuration(ms))).toBe(ms);
      }),
    );
  });

  it('round-trips through parseDuration for everyday durations', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 30 * DAY }), (ms) => {
        expect(parseDuration(formatDuration(ms))).toBe(ms);
      }),
    );
  });

  it('writes any accepted duration back in one canonical spelling', () => {
    const part = (unit: string, max: number) =>
      fc.option(fc.integer({ min: 1, max }).map((n) => `${n}${unit}`));
    const text = fc
      .tuple(part('d', 400), part('h', 23), part('m', 59), part('s', 59), part('ms', 999))
      .map((parts) => parts.filter((p): p is string => p !== null).join(''))
      .filter((t) => t !== '');
    fc.assert(
      fc.property(text, (t) => {
        expect(formatDuration(parseDuration(t) ?? -1)).toBe(t);
      }),
    );
  });
});
