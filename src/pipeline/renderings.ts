/**
 * The ways people write a value in free text: what the card and the edit form show for it (see
 * views/arg-fields.ts), and how an agent or a person quoting it in a reply would write it. Used to find
 * text that still quotes a value an edit changed (consistency.ts).
 */
import { z } from 'zod';
import { fieldRegistry } from './fields.ts';
import { formatMoney, moneyToDecimal } from './money.ts';

/** What a value is, as far as writing it goes (the same kinds views/arg-fields.ts reads from a schema). */
export type ValueKind = 'money' | 'date' | 'datetime' | 'int' | 'text' | 'long_text' | 'enum' | 'other';

/** The kind of a field schema (optional/nullable already unwrapped) and its currency for money. */
export function valueKindOf(schema: z.ZodType | undefined): { kind: ValueKind; currency?: string } {
  if (schema === undefined) return { kind: 'other' };
  const meta = fieldRegistry.get(schema);
  if (meta?.kind === 'money') return { kind: 'money', currency: meta.currency ?? 'USD' };
  if (meta?.kind === 'long_text') return { kind: 'long_text' };
  if (schema instanceof z.ZodISODate) return { kind: 'date' };
  if (schema instanceof z.ZodISODateTime) return { kind: 'datetime' };
  if (schema instanceof z.ZodEnum) return { kind: 'enum' };
  if (schema instanceof z.ZodNumber) return { kind: 'int' };
  if (schema instanceof z.ZodString || schema instanceof z.ZodStringFormat) return { kind: 'text' };
  return { kind: 'other' };
}

const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'] as const;
const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
] as const;

/** Shortest value worth looking for in text: "in" or "12" would be found everywhere. */
const MIN_TEXT_LENGTH = 3;

/**
 * Every way `value` may be written in text, longest first (so the longest quote found is the one
 * reported). Dates: "Friday 3 April 2026", "Fri 3 Apr 2026" (the card's), "3 April", "Fri 3 Apr",
 * "April 3", "2026-04-03"…; money: "$1,489.00", "1,489.00", "1489.00" (the form's), and "$1,489",
 * "1,489", "1489" for whole amounts; integers of 3 digits or more as written and grouped; text and
 * choices verbatim (3 characters or more). Long text, booleans and structures have none.
 * @example valueRenderings({ kind: 'money', currency: 'USD' }, 148900) // ['$1,489.00', '1,489.00', '1489.00', '$1,489', '1,489', '1489']
 */
export function valueRenderings(
  field: { readonly kind: ValueKind; readonly currency?: string | undefined },
  value: unknown,
): string[] {
  const found = renderingsOf(field, value);
  return [...new Set(found)].sort((a, b) => b.length - a.length);
}

function renderingsOf(
  field: { readonly kind: ValueKind; readonly currency?: string | undefined },
  value: unknown,
): string[] {
  switch (field.kind) {
    case 'money':
      return Number.isSafeInteger(value) ? moneyRenderings(value as number, field.currency ?? 'USD') : [];
    case 'date':
      return typeof value === 'string' ? dateRenderings(value) : [];
    case 'int':
      return Number.isSafeInteger(value) && Math.abs(value as number) >= 100
        ? [String(value), groupThousands(String(value))]
        : [];
    case 'datetime':
    case 'text':
    case 'enum':
      return typeof value === 'string' && value.trim().length >= MIN_TEXT_LENGTH ? [value.trim()] : [];
    case 'long_text':
    case 'other':
      return [];
  }
}

function groupThousands(digits: string): string {
  return digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

function moneyRenderings(minor: number, currency: string): string[] {
  const formatted = formatMoney(minor, currency); // "$1,489.00"
  const decimal = moneyToDecimal(minor, currency); // "1489.00"
  const [whole = decimal, fraction = ''] = decimal.split('.');
  const grouped = groupThousands(whole.replace('-', '')); // "1,489"
  const sign = minor < 0 ? '-' : '';
  const symbol = formatted.replace(/[-\d.,\s]/g, '');
  const out = [formatted, `${sign}${grouped}${fraction === '' ? '' : `.${fraction}`}`, decimal];
  if (/^0*$/.test(fraction)) {
    // A whole amount is often written without its cents.
    out.push(`${sign}${symbol}${grouped}`, `${sign}${grouped}`, `${sign}${whole.replace('-', '')}`);
  }
  // A bare number shorter than 3 digits ("5") would be found everywhere; "$5" and "5.00" are kept.
  return out.filter(
    (rendering) => /[^\d-]/.test(rendering) || rendering.replace('-', '').length >= MIN_TEXT_LENGTH,
  );
}

function dateRenderings(iso: string): string[] {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(iso);
  if (!match) return [];
  const [, year = '', month = '', day = ''] = match;
  const date = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  if (Number.isNaN(date.getTime()) || date.getUTCDate() !== Number(day)) return [];
  const weekday = WEEKDAYS[date.getUTCDay()]!;
  const monthName = MONTHS[date.getUTCMonth()]!;
  const d = String(Number(day));
  const days = [d, `${d}${ordinal(Number(day))}`];
  const out: string[] = [iso];
  for (const wd of [weekday, weekday.slice(0, 3)]) {
    for (const mo of [monthName, monthName.slice(0, 3)]) {
      for (const dd of days) {
        out.push(
          `${wd} ${dd} ${mo} ${year}`,
          `${wd} ${dd} ${mo}`,
          `${wd}, ${dd} ${mo}`,
          `${wd}, ${mo} ${dd}`,
        );
        out.push(`${wd} ${mo} ${dd}`);
      }
    }
  }
  for (const mo of [monthName, monthName.slice(0, 3)]) {
    for (const dd of days)
      out.push(`${dd} ${mo} ${year}`, `${dd} ${mo}`, `${mo} ${dd}, ${year}`, `${mo} ${dd}`);
  }
  return out;
}

function ordinal(day: number): string {
  if (day >= 11 && day <= 13) return 'th';
  return ['th', 'st', 'nd', 'rd'][day % 10] ?? 'th';
}

/**
 * Where `text` quotes one of `renderings` as a whole word (case-insensitive; a number never as part
 * of a longer number such as "1,489.50" for "1,489"): the longest quote found, as written in `text`.
 */
export function findQuote(text: string, renderings: readonly string[]): string | undefined {
  const lower = text.toLowerCase();
  for (const rendering of renderings) {
    const needle = rendering.toLowerCase();
    let from = 0;
    for (;;) {
      const at = lower.indexOf(needle, from);
      if (at === -1) break;
      if (standsAlone(text, at, at + needle.length)) return text.slice(at, at + needle.length);
      from = at + 1;
    }
  }
  return undefined;
}

const WORD = /[\p{L}\p{N}_]/u;

function standsAlone(text: string, start: number, end: number): boolean {
  const before = text.slice(Math.max(0, start - 2), start);
  const after = text.slice(end, end + 2);
  if (WORD.test(before.slice(-1)) && WORD.test(text.charAt(start))) return false;
  if (WORD.test(after.charAt(0)) && WORD.test(text.charAt(end - 1))) return false;
  // "1,489" inside "1,489.50", "489.00" inside "1,489.00".
  if (/^[.,]\d/.test(after) && /\d$/.test(text.slice(start, end))) return false;
  if (/\d[.,]$/.test(before) && /^\d/.test(text.slice(start, end))) return false;
  return true;
}
