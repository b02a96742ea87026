/** The exact verdict on a JSON number's digits, for numbers too long or too odd for the fast path. */
const ZERO = 0x30;

/**
 * Exact verdict on the decimal `int.frac × 10^±exp` (digits only, sign handled by the caller):
 * 'zero', a problem code, or the (positive) safe integer it denotes.
 */
export function classifyDecimal(
  intDigits: string,
  fracDigits: string,
  exponentNegative: boolean,
  exponentDigits: string,
): 'zero' | 'non_integer_number' | 'unsafe_integer' | number {
  const all = intDigits + fracDigits;
  let first = 0;
  while (first < all.length && all.charCodeAt(first) === ZERO) first++;
  if (first === all.length) return 'zero';
  let end = all.length;
  while (all.charCodeAt(end - 1) === ZERO) end--;
  const significant = all.slice(first, end);

  // Anything with more than 15 digits of exponent is astronomically large or small.
  const exponentText = exponentDigits.replace(/^0+/, '');
  if (exponentText.length > 15) return exponentNegative ? 'non_integer_number' : 'unsafe_integer';
  const exponent = exponentText === '' ? 0 : Number(exponentText);
  // value = significant × 10^scale
  const scale = (exponentNegative ? -exponent : exponent) - fracDigits.length + (all.length - end);
  if (scale < 0) return 'non_integer_number';
  if (significant.length + scale > 16) return 'unsafe_integer';
  const value = Number(significant + '0'.repeat(scale));
  return Number.isSafeInteger(value) ? value : 'unsafe_integer';
}
