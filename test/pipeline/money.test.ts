import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatMoney, minorDigits, moneyToDecimal, parseMoneyInput } from '../../src/pipeline/money.ts';

const CURRENCIES = ['USD', 'JPY', 'BHD'] as const;
const safeMinor = fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER });

describe('minorDigits', () => {
  it('knows how many minor-unit digits USD, JPY and BHD have', () => {
    expect(CURRENCIES.map(minorDigits)).toEqual([2, 0, 3]);
  });
});

describe('formatMoney', () => {
  it('shows 148900 cents as $1,489.00', () => {
    expect(formatMoney(148900, 'USD')).toBe('$1,489.00');
  });

  it('shows zero and single cents with their leading zeros', () => {
    expect(formatMoney(0, 'USD')).toBe('$0.00');
    expect(formatMoney(5, 'USD')).toBe('$0.05');
    expect(formatMoney(50, 'USD')).toBe('$0.50');
    expect(formatMoney(100, 'USD')).toBe('$1.00');
  });

  it('puts the minus sign before the symbol, as en-US does', () => {
    expect(formatMoney(-5, 'USD')).toBe('-$0.05');
    expect(formatMoney(-148900, 'USD')).toBe('-$1,489.00');
    expect(formatMoney(-5, 'EUR')).toBe('-€0.05');
  });

  it('shows negative zero as zero, without a sign', () => {
    expect(formatMoney(-0, 'USD')).toBe('$0.00');
  });

  it('shows yen without decimals', () => {
    expect(formatMoney(1489, 'JPY')).toBe('¥1,489');
    expect(formatMoney(0, 'JPY')).toBe('¥0');
  });

  it('shows three decimals for dinars, with the code spaced from the amount', () => {
    expect(formatMoney(1500, 'BHD')).toBe('BHD 1.500');
    expect(formatMoney(5, 'BHD')).toBe('BHD 0.005');
    expect(formatMoney(-1234567, 'BHD')).toBe('-BHD 1,234.567');
  });

  it('groups thousands all the way up to the largest safe integer', () => {
    expect(formatMoney(100_000_000, 'USD')).toBe('$1,000,000.00');
    expect(formatMoney(Number.MAX_SAFE_INTEGER, 'USD')).toBe('$90,071,992,547,409.91');
    expect(formatMoney(Number.MAX_SAFE_INTEGER, 'JPY')).toBe('¥9,007,199,254,740,991');
  });

  it('refuses amounts that are not integer minor units instead of printing nonsense', () => {
    for (const bad of [1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53]) {
      expect(() => formatMoney(bad, 'USD')).toThrow(expect.objectContaining({ code: 'invalid_argument' }));
    }
  });
});

describe('moneyToDecimal', () => {
  it('writes minor units as the plain decimal an input field shows', () => {
    expect(moneyToDecimal(148900, 'USD')).toBe('1489.00');
    expect(moneyToDecimal(5, 'USD')).toBe('0.05');
    expect(moneyToDecimal(0, 'USD')).toBe('0.00');
    expect(moneyToDecimal(-5, 'USD')).toBe('-0.05');
    expect(moneyToDecimal(1489, 'JPY')).toBe('1489');
    expect(moneyToDecimal(5, 'BHD')).toBe('0.005');
  });

  it('never groups thousands or adds a symbol', () => {
    expect(moneyToDecimal(Number.MAX_SAFE_INTEGER, 'USD')).toBe('90071992547409.91');
  });

  it('refuses amounts that are not integer minor units', () => {
    expect(() => moneyToDecimal(0.1, 'USD')).toThrow(expect.objectContaining({ code: 'invalid_argument' }));
  });
});

describe('parseMoneyInput', () => {
  const usd = (text: string) => parseMoneyInput(text, 'USD');

  it.each([
    ['1489', 148900],
    ['1,489.5', 148950],
    ['$1,489.00', 148900],
    [' 1489.00 ', 148900],
    ['0.1', 10],
    ['0.05', 5],
    ['5.', 500],
    ['0005', 500],
    ['$ 5', 500],
    ['1489 USD', 148900],
    ['usd 12.30', 1230],
    ['1,000,000', 100_000_000],
  ])('reads %j as %i cents', (text, minor) => {
    expect(usd(text)).toEqual({ ok: true, minor });
  });

  it('reads ".5" as fifty cents (a leading point is a decimal, never dropped)', () => {
    expect(usd('.5')).toEqual({ ok: true, minor: 50 });
    expect(usd('$.05')).toEqual({ ok: true, minor: 5 });
  });

  it('reads "-0" as 0, not -0', () => {
    const result = usd('-0');
    expect(result).toEqual({ ok: true, minor: 0 });
    expect(result.ok && Object.is(result.minor, -0)).toBe(false);
  });

  it('reads a minus before or after the symbol as a negative amount (the schema decides if that is allowed)', () => {
    expect(usd('-5')).toEqual({ ok: true, minor: -500 });
    expect(usd('-$0.05')).toEqual({ ok: true, minor: -5 });
    expect(usd('$-0.05')).toEqual({ ok: true, minor: -5 });
    expect(usd('-$-5').ok).toBe(false);
  });

  it('refuses more decimals than the currency has instead of rounding', () => {
    expect(usd('1.234')).toEqual({
      ok: false,
      message: 'USD amounts have at most 2 decimal places (write it like 1489.00)',
    });
    expect(parseMoneyInput('1.000', 'JPY')).toEqual({
      ok: false,
      message: 'JPY amounts have no decimal places (write it like 1489)',
    });
    expect(parseMoneyInput('1.2345', 'BHD')).toEqual({
      ok: false,
      message: 'BHD amounts have at most 3 decimal places (write it like 1489.000)',
    });
  });

  it('refuses a decimal comma rather than reading "1489,50" as $148,950.00', () => {
    expect(usd('1489,50')).toEqual({
      ok: false,
      message: '"1489,50" is not an amount (write it like 1489.00)',
    });
  });

  it.each(['1,48', '1,4,8,9', '14,89.00', ',5'])('refuses commas that do not group thousands: %j', (text) => {
    expect(usd(text).ok).toBe(false);
  });

  it.each(['abc', '', '   ', '.', '-', '$', '1e3', '+5', '1 489', '0x10', 'Infinity', 'NaN', '١٢٣', '1_000'])(
    'refuses %j as not an amount',
    (text) => {
      const result = usd(text);
      expect(result.ok).toBe(false);
      expect(!result.ok && result.message).toMatch(/is not an amount \(write it like 1489\.00\)$/);
    },
  );

  it('names what was typed in the message', () => {
    expect(usd(' abc ')).toEqual({ ok: false, message: '"abc" is not an amount (write it like 1489.00)' });
  });

  it('refuses text around the number, including another currency', () => {
    expect(usd('abc12').ok).toBe(false);
    expect(usd('EUR 5').ok).toBe(false);
    expect(usd('€5').ok).toBe(false);
    expect(usd('5 dollars').ok).toBe(false);
  });

  it('refuses amounts too large to be exact', () => {
    expect(usd('99999999999999999999')).toEqual({
      ok: false,
      message: '"99999999999999999999" is too large an amount',
    });
    expect(usd('90071992547409.92').ok).toBe(false);
    expect(usd('90071992547409.91')).toEqual({ ok: true, minor: Number.MAX_SAFE_INTEGER });
  });

  it('refuses very long input without echoing it', () => {
    expect(usd(`${' '.repeat(10)}-${' '.repeat(5000)}x`)).toEqual({
      ok: false,
      message: 'that is not an amount (write it like 1489.00)',
    });
  });

  it('reads yen and dinar amounts with their own symbols and decimals', () => {
    expect(parseMoneyInput('¥1,489', 'JPY')).toEqual({ ok: true, minor: 1489 });
    expect(parseMoneyInput('JPY 5', 'JPY')).toEqual({ ok: true, minor: 5 });
    expect(parseMoneyInput('BHD 1.5', 'BHD')).toEqual({ ok: true, minor: 1500 });
    expect(parseMoneyInput('0.005', 'BHD')).toEqual({ ok: true, minor: 5 });
  });

  describe('round trips, exactly, for every safe amount', () => {
    const currency = fc.constantFrom(...CURRENCIES);

    it('reads back what moneyToDecimal wrote', () => {
      fc.assert(
        fc.property(safeMinor, currency, (minor, c) => {
          expect(parseMoneyInput(moneyToDecimal(minor, c), c)).toEqual({ ok: true, minor });
        }),
      );
    });

    it('reads back what formatMoney wrote, with or without its symbol', () => {
      fc.assert(
        fc.property(safeMinor, currency, fc.boolean(), (minor, c, keepSymbol) => {
          const shown = formatMoney(minor, c);
          const typed = keepSymbol ? shown : shown.replace(/^[^\d]+/, '');
          expect(parseMoneyInput(typed, c)).toEqual({ ok: true, minor });
        }),
      );
    });

    it('reads back negative amounts too', () => {
      fc.assert(
        fc.property(fc.integer({ min: -Number.MAX_SAFE_INTEGER, max: -1 }), currency, (minor, c) => {
          expect(parseMoneyInput(formatMoney(minor, c), c)).toEqual({ ok: true, minor });
          expect(parseMoneyInput(moneyToDecimal(minor, c), c)).toEqual({ ok: true, minor });
        }),
      );
    });

    it('never accepts an amount with more decimals than the currency has', () => {
      fc.assert(
        fc.property(safeMinor, currency, fc.integer({ min: 1, max: 9 }), (minor, c, extra) => {
          const decimal = moneyToDecimal(minor, c);
          const typed = `${decimal}${minorDigits(c) === 0 ? '.' : ''}${String(extra)}`;
          expect(parseMoneyInput(typed, c).ok).toBe(false);
        }),
      );
    });
  });
});
