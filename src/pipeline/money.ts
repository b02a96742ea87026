/**
 * Money is an integer count of minor units (cents) plus a currency. These helpers convert between
 * that and what people read and type, with string arithmetic only: no float ever touches an amount.
 */
import { CountersignError } from './errors.ts';

const fractionDigitsCache = new Map<string, number>();

/** Minor-unit digits of an ISO 4217 currency (USD 2, JPY 0, BHD 3). */
export function minorDigits(currency: string): number {
  let digits = fractionDigitsCache.get(currency);
  if (digits === undefined) {
    digits = new Intl.NumberFormat('en-US', { style: 'currency', currency }).resolvedOptions()
      .maximumFractionDigits as number;
    fractionDigitsCache.set(currency, digits);
  }
  return digits;
}

const symbolCache = new Map<string, string>();

/** The currency's symbol as en-US writes it ("$", "€", "NOK"); Intl formatters are costly, so cached. */
function currencySymbol(currency: string): string {
  let symbol = symbolCache.get(currency);
  if (symbol === undefined) {
    symbol =
      new Intl.NumberFormat('en-US', { style: 'currency', currency })
        .formatToParts(0)
        .find((p) => p.type === 'currency')?.value ?? currency;
    symbolCache.set(currency, symbol);
  }
  return symbol;
}

function groupThousands(digits: string): string {
  return digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** Amounts are safe integers; anything else reaching a formatter is a bug upstream, not user input. */
function assertMinor(minor: number): void {
  if (!Number.isSafeInteger(minor))
    throw new CountersignError('invalid_argument', `${minor} is not an integer number of minor units`);
}

/** `abs` split into whole and fraction digits, both as strings. */
function splitMinor(minor: number, digits: number): { sign: string; whole: string; fraction: string } {
  const abs = String(Math.abs(minor)).padStart(digits + 1, '0');
  return {
    sign: minor < 0 ? '-' : '',
    whole: abs.slice(0, abs.length - digits),
    fraction: abs.slice(abs.length - digits),
  };
}

/**
 * Renders minor units for people: `formatMoney(148900, 'USD')` → `"$1,489.00"`. Codes used as
 * symbols are spaced like en-US writes them: `"BHD 1.500"`.
 * @example formatMoney(-5, 'EUR') // "-€0.05"
 */
export function formatMoney(minor: number, currency: string): string {
  assertMinor(minor);
  const digits = minorDigits(currency);
  const { sign, whole, fraction } = splitMinor(minor, digits);
  const symbol = currencySymbol(currency);
  const prefix = /\p{L}$/u.test(symbol) ? `${symbol} ` : symbol;
  return `${sign}${prefix}${groupThousands(whole)}${digits > 0 ? `.${fraction}` : ''}`;
}

/** Renders minor units as a plain decimal for an input field: `148900` → `"1489.00"`. */
export function moneyToDecimal(minor: number, currency: string): string {
  assertMinor(minor);
  const digits = minorDigits(currency);
  const { sign, whole, fraction } = splitMinor(minor, digits);
  return digits === 0 ? `${sign}${whole}` : `${sign}${whole}.${fraction}`;
}

export type MoneyInputResult = { ok: true; minor: number } | { ok: false; message: string };

const inputPatternCache = new Map<string, RegExp>();

/**
 * What a typed amount may look like: an optional minus, the currency's symbol or code before or after
 * the number, commas only between groups of three digits, and a decimal point.
 */
function inputPattern(currency: string): RegExp {
  let pattern = inputPatternCache.get(currency);
  if (pattern === undefined) {
    const literal = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const unit = `(?:${literal(currencySymbol(currency))}|${literal(currency)})`;
    pattern = new RegExp(
      `^(-?)\\s*(?:${unit}\\s*(-?)\\s*)?(\\d{1,3}(?:,\\d{3})+|\\d*)(?:\\.(\\d*))?(?:\\s*${unit})?$`,
      'iu',
    );
    inputPatternCache.set(currency, pattern);
  }
  return pattern;
}

/**
 * Parses what a person typed ("1489", "1,489.5", "$1,489.00", ".5", "1489 USD") into minor units,
 * exactly. More decimals than the currency has are refused rather than rounded (so "1.234" is never
 * read as 1234 or 1.23), and so is a decimal comma ("1489,50").
 */
export function parseMoneyInput(text: string, currency: string): MoneyInputResult {
  const digits = minorDigits(currency);
  const typed = text.trim();
  const example = digits === 0 ? '1489' : `1489.${'0'.repeat(digits)}`;
  const notAnAmount = (shown: string) =>
    ({ ok: false, message: `${shown} is not an amount (write it like ${example})` }) as const;
  // No amount is this long; the cap also bounds the pattern's backtracking on odd input.
  if (typed.length > 64) return notAnAmount('that');
  const match = inputPattern(currency).exec(typed);
  if (!match) return notAnAmount(JSON.stringify(typed));
  const [, before = '', after = '', whole = '', fraction] = match;
  if ((before !== '' && after !== '') || (whole === '' && !fraction))
    return notAnAmount(JSON.stringify(typed));
  if (fraction !== undefined && fraction.length > digits) {
    const places = digits === 0 ? 'no' : `at most ${digits}`;
    return {
      ok: false,
      message: `${currency} amounts have ${places} decimal places (write it like ${example})`,
    };
  }
  // Leading zeros are harmless to Number(); the digits themselves are exact up to 2^53.
  const minorText = `${whole.replaceAll(',', '')}${(fraction ?? '').padEnd(digits, '0')}`;
  const minor = Number(minorText);
  if (!Number.isSafeInteger(minor)) return { ok: false, message: `"${typed}" is too large an amount` };
  return { ok: true, minor: minor !== 0 && (before === '-' || after === '-') ? -minor : minor };
}
