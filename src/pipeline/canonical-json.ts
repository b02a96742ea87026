import * as crypto from 'node:crypto';
import type { JsonValue } from './json.ts';
import { formatJsonPath } from './json-path.ts';

/** Why a value could not be written as canonical JSON. */
export type CanonicalJsonErrorCode = 'non_integer_number' | 'negative_zero' | 'unsafe_integer' | 'not_json';

/**
 * Thrown by `canonicalJson` for a value validation should already have rejected. Reaching it is a
 * bug in the caller, not bad input, which is why it throws instead of returning a result.
 */
export class CanonicalJsonError extends Error {
  override readonly name = 'CanonicalJsonError';
  readonly code: CanonicalJsonErrorCode;
  /** Where in the value the problem is, e.g. `['steps', 0, 'args', 'amount']`. */
  readonly path: readonly (string | number)[];

  constructor(code: CanonicalJsonErrorCode, path: readonly (string | number)[], detail: string) {
    super(`${detail} at ${formatJsonPath(path)} (${code})`);
    this.code = code;
    this.path = path;
  }
}

/** Type guard for `CanonicalJsonError`. */
export function isCanonicalJsonError(error: unknown): error is CanonicalJsonError {
  return error instanceof CanonicalJsonError;
}

/**
 * The canonical JSON text of a value (docs/architecture.md §2): keys sorted by UTF-16 code units, no
 * whitespace, strings and integers as `JSON.stringify` writes them. Throws `CanonicalJsonError` for
 * anything that is not a JSON value with safe-integer numbers.
 *
 * @example canonicalJson({ b: [1, 'x'], a: null }) // '{"a":null,"b":[1,"x"]}'
 */
export function canonicalJson(value: JsonValue): string {
  const writer = new Writer();
  try {
    writer.write(value);
  } catch (error) {
    if (error instanceof Rejected) throw new CanonicalJsonError(error.code, error.path, error.detail);
    throw error;
  }
  return writer.out;
}

/** Lower-case hex SHA-256 of the UTF-8 bytes of `text`. */
export function sha256Hex(text: string): string {
  return oneShotHash === undefined
    ? crypto.createHash('sha256').update(text, 'utf8').digest('hex')
    : oneShotHash('sha256', text, 'hex');
}

// `crypto.hash` (Node ≥ 20.12) skips the Hash object: about 3× faster for plan-sized inputs.
const oneShotHash = (crypto as { hash?: (algorithm: string, data: string, encoding: 'hex') => string }).hash;

/**
 * Internal signal carrying a problem up the recursion. Errors are rare (a bug upstream), so the
 * path is assembled while unwinding instead of being tracked on every call, and the public error
 * (with its stack trace and message) is built once at the top.
 */
class Rejected {
  readonly code: CanonicalJsonErrorCode;
  readonly detail: string;
  readonly path: (string | number)[] = [];

  constructor(code: CanonicalJsonErrorCode, detail: string, segment?: string | number) {
    this.code = code;
    this.detail = detail;
    if (segment !== undefined) this.path.push(segment);
  }
}

/**
 * Appends to one string per call instead of returning and re-joining a string per node (about a
 * fifth faster on large plans). One instance per call keeps it reentrant.
 */
class Writer {
  out = '';

  // `unknown` rather than `JsonValue`: the static type is a promise the caller made; this checks it.
  write(value: unknown): void {
    switch (typeof value) {
      case 'string':
        this.out += quote(value);
        return;
      case 'number':
        this.out += formatNumber(value);
        return;
      case 'boolean':
        this.out += value ? 'true' : 'false';
        return;
      case 'object':
        if (value === null) this.out += 'null';
        else if (Array.isArray(value)) this.writeArray(value);
        else this.writeObject(value);
        return;
      default:
        throw new Rejected('not_json', `${typeof value} is not a JSON value`);
    }
  }

  private writeArray(array: readonly unknown[]): void {
    if (Object.getPrototypeOf(array) !== Array.prototype) {
      throw new Rejected('not_json', 'an array subclass is not a JSON value');
    }
    this.out += '[';
    for (let index = 0; index < array.length; index++) {
      const element = array[index];
      // A hole reads as undefined, so this also rejects sparse arrays.
      if (element === undefined) throw new Rejected('not_json', 'undefined is not a JSON value', index);
      if (index > 0) this.out += ',';
      this.writeMember(index, element);
    }
    this.out += ']';
  }

  private writeObject(object: object): void {
    const proto: unknown = Object.getPrototypeOf(object);
    if (proto !== Object.prototype && proto !== null) {
      const kind = (object as { constructor?: { name?: unknown } }).constructor?.name;
      throw new Rejected(
        'not_json',
        `${typeof kind === 'string' ? kind : 'a non-plain object'} is not a JSON value`,
      );
    }
    const record = object as Record<string, unknown>;
    // Default sort compares UTF-16 code units, which is the contract (not code points).
    const keys = Object.keys(record).sort();
    this.out += '{';
    for (let index = 0; index < keys.length; index++) {
      const key = keys[index]!;
      const member = record[key];
      if (member === undefined) throw new Rejected('not_json', 'undefined is not a JSON value', key);
      if (index > 0) this.out += ',';
      this.out += quotedKey(key);
      this.writeMember(key, member);
    }
    this.out += '}';
  }

  private writeMember(segment: string | number, value: unknown): void {
    try {
      this.write(value);
    } catch (error) {
      if (error instanceof Rejected) error.path.unshift(segment);
      throw error;
    }
  }
}

function formatNumber(value: number): string {
  if (Number.isSafeInteger(value)) {
    // 1 / -0 is -Infinity; checked only for zero so the common path stays one comparison.
    if (value === 0 && 1 / value < 0) throw new Rejected('negative_zero', '-0 is not allowed');
    return String(value);
  }
  if (Number.isInteger(value))
    throw new Rejected('unsafe_integer', `${value} is outside the safe integer range`);
  throw new Rejected('non_integer_number', `${value} is not an integer`);
}

/** Characters `JSON.stringify` would escape; surrogates are included so pairs go the slow, exact way. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/**
 * Exactly `JSON.stringify(text)`. Most plan strings need no escaping, and skipping the native call
 * for them makes string output several times faster.
 */
function quote(text: string): string {
  return NEEDS_ESCAPE.test(text) ? JSON.stringify(text) : `"${text}"`;
}

/**
 * `"key":` for a key, memoized: plans repeat the same few keys (`args`, `tool`, field names)
 * thousands of times. Bounded in entry count and key length so hostile input cannot grow it.
 */
const keyCache = new Map<string, string>();
const KEY_CACHE_ENTRIES = 4096;
const KEY_CACHE_KEY_LENGTH = 64;

function quotedKey(key: string): string {
  let quoted = keyCache.get(key);
  if (quoted === undefined) {
    quoted = `${quote(key)}:`;
    if (key.length <= KEY_CACHE_KEY_LENGTH && keyCache.size < KEY_CACHE_ENTRIES) keyCache.set(key, quoted);
  }
  return quoted;
}
