import fc from 'fast-check';
import type { JsonObject, JsonValue } from '../../src/pipeline/json.ts';

/** One UTF-16 unit or code point: any Unicode scalar, plus lone surrogates that JSON.parse keeps. */
const textUnit = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
  { weight: 1, arbitrary: fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code)) },
  { weight: 1, arbitrary: fc.constantFrom('"', '\\', '/', '\n', '\u0000', '\u001f', '\u2028', '__proto__') },
);

/** Strings with astral characters, control characters, escapes and lone surrogates. */
export const jsonString = fc.string({ unit: textUnit, maxLength: 12 });

/** Safe integers, never -0, with the edges of the range over-represented. */
export const safeInteger = fc
  .oneof(
    fc.maxSafeInteger(),
    fc.integer({ min: -1000, max: 1000 }),
    fc.constantFrom(Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, 0),
  )
  .map((n) => (n === 0 ? 0 : n));

/** Arbitrary JSON values Countersign accepts (safe integers only); objects sometimes have null prototypes. */
export const safeJsonValue: fc.Arbitrary<JsonValue> = fc.letrec<{ value: JsonValue }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    safeInteger,
    jsonString,
    fc.array(tie('value'), { maxLength: 5 }),
    fc.dictionary(jsonString, tie('value'), { maxKeys: 5 }) as fc.Arbitrary<JsonObject>,
  ),
})).value;

/** Arbitrary non-empty JSON objects (step args). */
export const safeJsonObject: fc.Arbitrary<JsonObject> = fc.dictionary(jsonString, safeJsonValue, {
  minKeys: 1,
  maxKeys: 6,
}) as fc.Arbitrary<JsonObject>;

/** Rebuilds a value with every object's keys inserted in a different order (derived from `seed`). */
export function reorderKeys(value: JsonValue, seed: number): JsonValue {
  if (Array.isArray(value)) return value.map((element, index) => reorderKeys(element, seed + index));
  if (value === null || typeof value !== 'object') return value;
  const keys = Object.keys(value);
  // Deterministic Fisher-Yates with a small LCG, so failures reproduce from fast-check's seed.
  let state = seed >>> 0;
  for (let index = keys.length - 1; index > 0; index--) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    const other = state % (index + 1);
    [keys[index], keys[other]] = [keys[other]!, keys[index]!];
  }
  // fromEntries defines own properties, so a "__proto__" key stays a key.
  return Object.fromEntries(keys.map((key, index) => [key, reorderKeys(value[key]!, seed + index + 1)]));
}

/** Paths to every value inside `value` (including containers), for "change anything" properties. */
export function allPaths(value: JsonValue, prefix: (string | number)[] = []): (string | number)[][] {
  const paths = [prefix];
  if (Array.isArray(value)) {
    for (const [index, element] of value.entries()) paths.push(...allPaths(element, [...prefix, index]));
  } else if (value !== null && typeof value === 'object') {
    for (const key of Object.keys(value)) paths.push(...allPaths(value[key]!, [...prefix, key]));
  }
  return paths;
}

/** A copy of `value` with the value at `path` replaced. */
export function replaceAt(
  value: JsonValue,
  path: readonly (string | number)[],
  replacement: JsonValue,
): JsonValue {
  const [head, ...rest] = path;
  if (head === undefined) return replacement;
  if (Array.isArray(value)) {
    return value.map((element, index) => (index === head ? replaceAt(element, rest, replacement) : element));
  }
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.keys(value).map((key) => [
      key,
      key === head ? replaceAt(value[key]!, rest, replacement) : value[key]!,
    ]),
  );
}
