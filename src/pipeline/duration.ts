/** Units from largest to smallest; a duration names each at most once, in this order. */
import { CountersignError } from './errors.ts';

const UNITS = [
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1000],
  ['ms', 1],
] as const;
const RANK = new Map<string, number>(UNITS.map(([unit], rank) => [unit, rank]));
const SIZE = new Map<string, number>(UNITS);
const PART = /(\d+)(ms|s|m|h|d)/y;

/**
 * Parses a human duration into milliseconds: `'15m'`, `'24h'`, `'2h30m'`, `'7d'`, `'500ms'`.
 * Returns undefined for anything else: `''`, `'10'` without a unit, `'1.5h'`, spaces, and units
 * repeated or out of order (`'1h1h'`, `'30m1h'`), which are more likely typos than sums.
 * @example parseDuration('1h30m') // 5_400_000
 */
export function parseDuration(text: string): number | undefined {
  if (text.length === 0 || text.length > 32) return undefined;
  let total = 0;
  let position = 0;
  let previousRank = -1;
  while (position < text.length) {
    PART.lastIndex = position;
    const match = PART.exec(text);
    if (match === null) return undefined;
    const [whole, amount = '', unit = ''] = match;
    const rank = RANK.get(unit) ?? -1;
    if (rank <= previousRank) return undefined;
    previousRank = rank;
    total += Number(amount) * (SIZE.get(unit) ?? Number.NaN);
    position += whole.length;
  }
  return Number.isSafeInteger(total) ? total : undefined;
}

/**
 * Renders milliseconds the way config writes them: 5_400_000 → `'1h30m'`, 0 → `'0s'`.
 * `parseDuration(formatDuration(ms)) === ms` for every non-negative safe integer.
 */
export function formatDuration(ms: number): string {
  if (!Number.isSafeInteger(ms) || ms < 0)
    throw new CountersignError('invalid_argument', `${ms} is not a duration in milliseconds`);
  if (ms === 0) return '0s';
  const parts: string[] = [];
  let rest = ms;
  for (const [unit, size] of UNITS) {
    const count = Math.floor(rest / size);
    if (count > 0) parts.push(`${count}${unit}`);
    rest -= count * size;
  }
  return parts.join('');
}
