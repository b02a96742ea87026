/**
 * The strict reader of plan text (`parseStrictJson`): what it rejects, and how it says so, is shared
 * with the value check (strict-json-problems.ts, check-json-value.ts).
 */
import type { JsonObject, JsonValue } from './json.ts';
import { classifyDecimal } from './strict-json-decimal.ts';
import {
  duplicateKey,
  type JsonCheck,
  type JsonLimits,
  MAX_JSON_PROBLEMS,
  numberProblem,
  Stop,
  type StrictJsonProblem,
  stringTooLong,
  tooDeep,
} from './strict-json-problems.ts';
import { syntaxProblem } from './strict-json-syntax.ts';

// A backslash or a control character: the string is read character by character.
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for.
const NEEDS_CAREFUL_READING = /[\\\u0000-\u001f]/;

/**
 * Parses plan text strictly. Unlike `JSON.parse` it rejects duplicate keys, numbers that are not
 * safe integers (`1.5`, `1e400`, `9007199254740993`), `-0`, and input beyond `limits`; `1.0` is
 * accepted as `1`. A leading byte order mark is skipped. Semantic problems are collected (up to
 * `maxProblems`); a syntax error or over-deep nesting ends parsing. Never throws; iterative, so any
 * nesting is safe.
 *
 * @example parseStrictJson('{"a":1,"a":2}', { maxDepth: 8, maxStringLength: 100 })
 * // { ok: false, problem: { code: 'duplicate_key', path: ['a'], message: 'duplicate key "a" at the top level' }, … }
 */
export function parseStrictJson(text: string, limits: JsonLimits): JsonCheck<StrictJsonProblem> {
  const parser = new Parser(text, limits);
  let value: JsonValue | undefined;
  try {
    value = parser.parse();
  } catch (error) {
    if (!(error instanceof Stop)) throw error;
  }
  const problems = parser.problems;
  if (problems.length > 0) return { ok: false, problem: problems[0]!, problems };
  // A Stop is only thrown after a problem is recorded, so value is set here.
  return { ok: true, value: value! };
}

// Own data property even for "__proto__", which plain assignment would treat as the prototype setter.
function setMember(object: JsonObject, key: string, value: JsonValue): void {
  if (key === '__proto__') {
    Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    object[key] = value;
  }
}

// ---------------------------------------------------------------------------------------------
// Text parser: an explicit stack instead of recursion, so 100k nested `[` cannot overflow.

interface ArrayFrame {
  readonly kind: 'array';
  readonly value: JsonValue[];
}

interface ObjectFrame {
  readonly kind: 'object';
  readonly value: JsonObject;
  /** Key of the member being parsed; `undefined` while the key itself is being read. */
  key: string | undefined;
  /** The current key repeats an earlier one: parse its value for errors but keep the first. */
  duplicate: boolean;
}

type Frame = ArrayFrame | ObjectFrame;

// Character codes, compared with charCodeAt so no one-character strings are allocated.
const TAB = 0x09;
const NEWLINE = 0x0a;
const RETURN = 0x0d;
const SPACE = 0x20;
const QUOTE = 0x22;
const PLUS = 0x2b;
const COMMA = 0x2c;
const MINUS = 0x2d;
const DOT = 0x2e;
const ZERO = 0x30;
const ONE = 0x31;
const NINE = 0x39;
const COLON = 0x3a;
const UPPER_E = 0x45;
const OPEN_BRACKET = 0x5b;
const BACKSLASH = 0x5c;
const CLOSE_BRACKET = 0x5d;
const LOWER_E = 0x65;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const BYTE_ORDER_MARK = 0xfeff;

class Parser {
  readonly problems: StrictJsonProblem[] = [];
  private readonly text: string;
  private readonly limits: JsonLimits;
  private readonly maxProblems: number;
  private readonly stack: Frame[] = [];
  private readonly start: number;
  private pos: number;

  constructor(text: string, limits: JsonLimits) {
    this.text = text;
    this.limits = limits;
    this.maxProblems = Math.max(1, limits.maxProblems ?? MAX_JSON_PROBLEMS);
    this.start = text.charCodeAt(0) === BYTE_ORDER_MARK ? 1 : 0;
    this.pos = this.start;
  }

  parse(): JsonValue {
    let value = this.parseValue();
    // Each pass adds the value just parsed to the innermost open container, then either moves on
    // to its next member or closes it (and the closed container becomes the value just parsed).
    for (;;) {
      const frame = this.stack[this.stack.length - 1];
      if (frame === undefined) break;
      if (frame.kind === 'array') frame.value.push(value);
      else if (!frame.duplicate) setMember(frame.value, frame.key!, value);
      this.skipWhitespace();
      const c = this.text.charCodeAt(this.pos);
      if (c === COMMA) {
        this.pos++;
        if (frame.kind === 'object') this.parseKey(frame);
        value = this.parseValue();
      } else if (c === (frame.kind === 'array' ? CLOSE_BRACKET : CLOSE_BRACE)) {
        this.pos++;
        this.stack.pop();
        value = frame.value;
      } else {
        this.syntaxError(frame.kind === 'array' ? "expected ',' or ']'" : "expected ',' or '}'");
      }
    }
    this.skipWhitespace();
    if (this.pos < this.text.length) this.syntaxError('expected the end of the input after the JSON value');
    return value;
  }

  /**
   * Returns the next scalar or empty container. Non-empty containers it meets on the way are
   * pushed (without recursion), so the value returned belongs to the innermost open container.
   */
  private parseValue(): JsonValue {
    for (;;) {
      this.skipWhitespace();
      const c = this.text.charCodeAt(this.pos);
      if (c === OPEN_BRACKET || c === OPEN_BRACE) {
        if (this.stack.length + 1 > this.limits.maxDepth) {
          this.report(tooDeep(this.path(), this.limits.maxDepth));
          throw new Stop(); // nothing sensible can be parsed past this point without the stack
        }
        this.pos++;
        this.skipWhitespace();
        if (c === OPEN_BRACKET) {
          const array: JsonValue[] = [];
          if (this.text.charCodeAt(this.pos) === CLOSE_BRACKET) {
            this.pos++;
            return array;
          }
          this.stack.push({ kind: 'array', value: array });
        } else {
          const object: JsonObject = {};
          if (this.text.charCodeAt(this.pos) === CLOSE_BRACE) {
            this.pos++;
            return object;
          }
          const frame: ObjectFrame = { kind: 'object', value: object, key: undefined, duplicate: false };
          this.stack.push(frame);
          this.parseKey(frame);
        }
        continue;
      }
      if (c === QUOTE) {
        const text = this.parseString();
        if (text.length > this.limits.maxStringLength) {
          this.report(stringTooLong('string', text, this.path(), this.limits.maxStringLength));
        }
        return text;
      }
      if (c === MINUS || (c >= ZERO && c <= NINE)) return this.parseNumber();
      if (this.text.startsWith('true', this.pos)) return this.literal(4, true);
      if (this.text.startsWith('false', this.pos)) return this.literal(5, false);
      if (this.text.startsWith('null', this.pos)) return this.literal(4, null);
      return this.syntaxError('expected a value');
    }
  }

  private literal(length: number, value: boolean | null): boolean | null {
    this.pos += length;
    return value;
  }

  /** Reads `"key" :` for an object member and records duplicate or over-long keys. */
  private parseKey(frame: ObjectFrame): void {
    frame.key = undefined;
    this.skipWhitespace();
    if (this.text.charCodeAt(this.pos) !== QUOTE) this.syntaxError('expected a key in double quotes');
    const key = this.parseString();
    frame.key = key;
    frame.duplicate = Object.hasOwn(frame.value, key);
    if (frame.duplicate) this.report(duplicateKey(key, this.path()));
    if (key.length > this.limits.maxStringLength) {
      this.report(stringTooLong('key', key, this.path(), this.limits.maxStringLength));
    }
    this.skipWhitespace();
    if (this.text.charCodeAt(this.pos) !== COLON) this.syntaxError("expected ':' after a key");
    this.pos++;
  }

  /** Decodes a string exactly as `JSON.parse` does (lone surrogates from `\u` escapes are kept). */
  private parseString(): string {
    const text = this.text;
    const opening = this.pos;
    // Fast path: most strings have no escape and no control character; native search finds their end.
    const closing = text.indexOf('"', opening + 1);
    if (closing !== -1) {
      const chunk = text.slice(opening + 1, closing);
      if (!NEEDS_CAREFUL_READING.test(chunk)) {
        this.pos = closing + 1;
        return chunk;
      }
    }
    let pos = opening + 1;
    let chunkStart = pos;
    let out = '';
    for (;;) {
      if (pos >= text.length) {
        this.pos = opening;
        return this.syntaxError('the string that starts here is never closed', false);
      }
      const c = text.charCodeAt(pos);
      if (c === QUOTE) {
        this.pos = pos + 1;
        return out + text.slice(chunkStart, pos);
      }
      if (c === BACKSLASH) {
        out += text.slice(chunkStart, pos);
        const escaped = text.charCodeAt(pos + 1);
        const simple = SIMPLE_ESCAPES[escaped];
        if (simple !== undefined) {
          out += simple;
          pos += 2;
        } else if (escaped === 0x75 /* u */) {
          const hex = text.slice(pos + 2, pos + 6);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) {
            this.pos = pos;
            return this.syntaxError('\\u must be followed by four hex digits', false);
          }
          out += String.fromCharCode(Number.parseInt(hex, 16));
          pos += 6;
        } else {
          this.pos = pos + 1;
          return this.syntaxError(
            'invalid escape in a string (use \\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX)',
          );
        }
        chunkStart = pos;
      } else if (c < SPACE) {
        this.pos = pos;
        return this.syntaxError('control characters in strings must be escaped');
      } else {
        pos++;
      }
    }
  }

  /**
   * Reads a number and decides from its digits (not from a rounded double) whether it is a safe
   * integer: `1.0000000000000001` is not an integer even though it rounds to 1.
   */
  private parseNumber(): JsonValue {
    const text = this.text;
    const start = this.pos;
    let pos = start;
    const negative = text.charCodeAt(pos) === MINUS;
    if (negative) pos++;
    const intStart = pos;
    let c = text.charCodeAt(pos);
    if (c === ZERO) {
      pos++;
    } else if (c >= ONE && c <= NINE) {
      do pos++;
      while (isDigit(text.charCodeAt(pos)));
    } else {
      this.pos = pos;
      return this.syntaxError("expected a digit after '-'");
    }
    const intEnd = pos;
    let fracStart = pos;
    let fracEnd = pos;
    c = text.charCodeAt(pos);
    if (c === DOT) {
      pos++;
      fracStart = pos;
      if (!isDigit(text.charCodeAt(pos))) {
        this.pos = pos;
        return this.syntaxError("expected a digit after '.'");
      }
      do pos++;
      while (isDigit(text.charCodeAt(pos)));
      fracEnd = pos;
      c = text.charCodeAt(pos);
    }
    let exponentNegative = false;
    let exponentDigits = '';
    if (c === LOWER_E || c === UPPER_E) {
      pos++;
      c = text.charCodeAt(pos);
      if (c === PLUS || c === MINUS) {
        exponentNegative = c === MINUS;
        pos++;
      }
      const expStart = pos;
      if (!isDigit(text.charCodeAt(pos))) {
        this.pos = pos;
        return this.syntaxError('expected a digit in the exponent');
      }
      do pos++;
      while (isDigit(text.charCodeAt(pos)));
      exponentDigits = text.slice(expStart, pos);
    }
    this.pos = pos;
    const literal = text.slice(start, pos);

    // Fast path: a plain integer of at most 15 digits is always safe.
    if (fracEnd === intEnd && exponentDigits === '' && intEnd - intStart <= 15) {
      if (negative && literal === '-0') return this.numberProblem('negative_zero', literal);
      return Number(literal);
    }
    const verdict = classifyDecimal(
      text.slice(intStart, intEnd),
      text.slice(fracStart, fracEnd),
      exponentNegative,
      exponentDigits,
    );
    if (verdict === 'zero') return negative ? this.numberProblem('negative_zero', literal) : 0;
    if (typeof verdict === 'string') return this.numberProblem(verdict, literal);
    return negative ? -verdict : verdict;
  }

  private numberProblem(
    code: 'non_integer_number' | 'negative_zero' | 'unsafe_integer',
    literal: string,
  ): number {
    this.report(numberProblem(code, literal, this.path()));
    return 0; // a placeholder; the result is a failure anyway
  }

  private skipWhitespace(): void {
    const text = this.text;
    let pos = this.pos;
    for (;;) {
      const c = text.charCodeAt(pos);
      if (c === SPACE || c === NEWLINE || c === RETURN || c === TAB) pos++;
      else break;
    }
    this.pos = pos;
  }

  /** Path to the value being parsed: each open container contributes its current index or key. */
  private path(): (string | number)[] {
    const path: (string | number)[] = [];
    for (const frame of this.stack) {
      if (frame.kind === 'array') path.push(frame.value.length);
      else if (frame.key !== undefined) path.push(frame.key);
    }
    return path;
  }

  private report(problem: StrictJsonProblem): void {
    this.problems.push(problem);
    if (this.problems.length >= this.maxProblems) throw new Stop();
  }

  private syntaxError(expected: string, showFound = true): never {
    this.problems.push(syntaxProblem(this.text, this.start, this.pos, this.path(), expected, showFound));
    throw new Stop();
  }
}

const SIMPLE_ESCAPES: Readonly<Record<number, string>> = {
  34: '"',
  92: '\\',
  47: '/',
  98: '\b',
  102: '\f',
  110: '\n',
  114: '\r',
  116: '\t',
};

function isDigit(c: number): boolean {
  return c >= ZERO && c <= NINE;
}
