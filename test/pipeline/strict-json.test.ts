import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkJsonValue } from '../../src/pipeline/check-json-value.ts';
import type { JsonValue } from '../../src/pipeline/json.ts';
import { parseStrictJson } from '../../src/pipeline/strict-json.ts';
import {
  type JsonLimits,
  MAX_JSON_PROBLEMS,
  type StrictJsonProblemCode,
} from '../../src/pipeline/strict-json-problems.ts';
import { jsonString, safeJsonValue } from './json-arbitraries.ts';

const roomy: JsonLimits = { maxDepth: 10_000, maxStringLength: 1_000_000 };
/** No problem cap, so a syntax error after many semantic problems is still reached. */
const uncapped: JsonLimits = { ...roomy, maxProblems: Number.POSITIVE_INFINITY };

/** The problems of a failed parse, or a test failure if it succeeded. */
function problemsOf(text: string, limits: JsonLimits = roomy) {
  const result = parseStrictJson(text, limits);
  if (result.ok) throw new Error(`expected ${JSON.stringify(text)} to be rejected`);
  expect(result.problem).toBe(result.problems[0]);
  return result.problems;
}

function parsedValue(text: string, limits: JsonLimits = roomy): JsonValue {
  const result = parseStrictJson(text, limits);
  if (!result.ok) throw new Error(`expected ${JSON.stringify(text)} to parse: ${result.problem.message}`);
  return result.value;
}

/** `[1, <hole>, 3]`, built without a literal hole. */
function sparse(): number[] {
  const list: number[] = [1];
  list[2] = 3;
  return list;
}

const SEMANTIC_CODES: readonly StrictJsonProblemCode[] = [
  'duplicate_key',
  'too_deep',
  'string_too_long',
  'non_integer_number',
  'negative_zero',
  'unsafe_integer',
];

describe('parseStrictJson: what it accepts', () => {
  it('round-trips any safe JSON value written by JSON.stringify, compact or indented', () => {
    fc.assert(
      fc.property(safeJsonValue, (value) => {
        expect(parsedValue(JSON.stringify(value))).toEqual(value);
        expect(parsedValue(JSON.stringify(value, null, '\t'))).toEqual(value);
      }),
    );
  });

  it('decodes every string exactly as JSON.parse does, lone surrogates included', () => {
    fc.assert(
      fc.property(jsonString, (text) => {
        expect(parsedValue(JSON.stringify(text))).toBe(text);
      }),
    );
    const escapes = '"\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\uD83D\\uDE00\\ud800 \\uDFFF"';
    expect(parsedValue(escapes)).toBe(JSON.parse(escapes));
  });

  it('keeps raw DEL, U+2028 and astral characters inside strings', () => {
    expect(parsedValue('"\u007f\u2028\u{1F69A}"')).toBe('\u007f\u2028\u{1F69A}');
  });

  it('accepts a number written with a zero fraction or an exponent when its value is a safe integer', () => {
    expect(
      parsedValue('[1.0, 1e2, 100e-2, -5, 0.0, 0e10, 12.340e2, 9007199254740991, -9007199254740991]'),
    ).toEqual([1, 100, 1, -5, 0, 0, 1234, 9007199254740991, -9007199254740991]);
  });

  it('skips a leading byte order mark but not one anywhere else', () => {
    expect(parsedValue('\uFEFF{"a":1}')).toEqual({ a: 1 });
    expect(problemsOf('[\uFEFF1]')[0]!.message).toBe(
      'invalid JSON at line 1, column 2: expected a value, found U+FEFF',
    );
  });

  it('makes "__proto__" an own data property instead of changing the prototype', () => {
    const value = parsedValue('{"__proto__": {"polluted": true}, "a": 1}') as Record<string, unknown>;
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.hasOwn(value, '__proto__')).toBe(true);
    expect(Object.keys(value)).toEqual(['__proto__', 'a']);
    expect(Object.getOwnPropertyDescriptor(value, '__proto__')?.value).toEqual({ polluted: true });
    expect((value as { polluted?: unknown }).polluted).toBeUndefined();
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
  });

  it('parses 100k nested arrays without overflowing the stack when the depth limit allows it', () => {
    const depth = 100_000;
    const result = parseStrictJson('['.repeat(depth) + ']'.repeat(depth), {
      maxDepth: depth,
      maxStringLength: 10,
    });
    expect(result.ok).toBe(true);
  });
});

describe('parseStrictJson: what it rejects, and how it says so', () => {
  it('rejects a duplicate key inside args and names its path', () => {
    const text = '{"steps":[{"args":{}},{"tool":"refund","args":{"amount":100,"amount":100000}}]}';
    expect(problemsOf(text)).toEqual([
      {
        code: 'duplicate_key',
        path: ['steps', 1, 'args', 'amount'],
        message: 'duplicate key "amount" at steps[1].args',
      },
    ]);
  });

  it('rejects a duplicate "__proto__" key like any other', () => {
    expect(problemsOf('{"__proto__":1,"__proto__":2}')[0]).toMatchObject({
      code: 'duplicate_key',
      message: 'duplicate key "__proto__" at the top level',
    });
  });

  it('reports a syntax error with its line and column and what it expected', () => {
    const text = '{\n  "a": 1,\n  "b": 2 "c": 3\n}';
    expect(problemsOf(text)).toEqual([
      {
        code: 'invalid_json',
        path: ['b'],
        message: `invalid JSON at line 3, column 10: expected ',' or '}', found '"'`,
      },
    ]);
  });

  it.each([
    ['', 'invalid JSON at line 1, column 1: expected a value, found the end of the input'],
    ['[1,]', "invalid JSON at line 1, column 4: expected a value, found ']'"],
    ['{"a":1,}', "invalid JSON at line 1, column 8: expected a key in double quotes, found '}'"],
    ["{'a':1}", `invalid JSON at line 1, column 2: expected a key in double quotes, found "'"`],
    ['{"a" 1}', "invalid JSON at line 1, column 6: expected ':' after a key, found '1'"],
    ['[1 2]', "invalid JSON at line 1, column 4: expected ',' or ']', found '2'"],
    ['01', "invalid JSON at line 1, column 2: expected the end of the input after the JSON value, found '1'"],
    ['-', "invalid JSON at line 1, column 2: expected a digit after '-', found the end of the input"],
    ['1.', "invalid JSON at line 1, column 3: expected a digit after '.', found the end of the input"],
    ['1e+', 'invalid JSON at line 1, column 4: expected a digit in the exponent, found the end of the input'],
    ['NaN', "invalid JSON at line 1, column 1: expected a value, found 'N'"],
    ['"abc', 'invalid JSON at line 1, column 1: the string that starts here is never closed'],
    [
      '"a\tb"',
      'invalid JSON at line 1, column 3: control characters in strings must be escaped, found U+0009',
    ],
    [
      '"\\x"',
      "invalid JSON at line 1, column 3: invalid escape in a string (use \\\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX), found 'x'",
    ],
    ['"\\u12g4"', 'invalid JSON at line 1, column 2: \\u must be followed by four hex digits'],
    ['\u00a01', 'invalid JSON at line 1, column 1: expected a value, found U+00A0'],
  ])('rejects %j as invalid JSON with a readable message', (text, message) => {
    expect(problemsOf(text)).toEqual([{ code: 'invalid_json', path: expect.any(Array), message }]);
  });

  it('rejects nesting deeper than maxDepth with the path where it happens', () => {
    const limits = { maxDepth: 3, maxStringLength: 100 };
    expect(parsedValue('{"a":[{}]}', limits)).toEqual({ a: [{}] });
    expect(problemsOf('{"a":[{"b":[]}]}', limits)).toEqual([
      {
        code: 'too_deep',
        path: ['a', 0, 'b'],
        message: 'value at a[0].b nests arrays and objects deeper than the limit of 3 levels',
      },
    ]);
    // A scalar has depth 0; the outermost container is depth 1.
    expect(parsedValue('1', { maxDepth: 0, maxStringLength: 1 })).toBe(1);
    expect(problemsOf('[]', { maxDepth: 0, maxStringLength: 1 })[0]!.code).toBe('too_deep');
  });

  it('stops quickly, without overflowing the stack, on 100k unclosed brackets', () => {
    const problems = problemsOf('['.repeat(100_000), { maxDepth: 64, maxStringLength: 10 });
    expect(problems).toHaveLength(1);
    expect(problems[0]!.code).toBe('too_deep');
    expect(problems[0]!.path).toHaveLength(64);
    expect(problemsOf('{"a":'.repeat(100_000), roomy)[0]!.code).toBe('too_deep');
  });

  it('rejects a string or a key longer than maxStringLength (in UTF-16 code units)', () => {
    const limits = { maxDepth: 8, maxStringLength: 5 };
    expect(parsedValue('["12345", "\u{1F600}\u{1F600}"]', limits)).toEqual(['12345', '\u{1F600}\u{1F600}']);
    expect(problemsOf('{"note":"123456","abcdef":1}', limits)).toEqual([
      {
        code: 'string_too_long',
        path: ['note'],
        message: 'string at note is 6 characters long; the limit is 5',
      },
      {
        code: 'string_too_long',
        path: ['abcdef'],
        message: 'key "abcdef" at the top level is 6 characters long; the limit is 5',
      },
    ]);
    expect(problemsOf('["\u{1F600}\u{1F600}\u{1F600}"]', limits)[0]!.code).toBe('string_too_long');
  });

  it.each([
    ['1.5', 'non_integer_number', 'is not a whole number; only integers are allowed'],
    ['1e-2', 'non_integer_number', 'is not a whole number'],
    ['1.0000000000000001', 'non_integer_number', 'is not a whole number'],
    ['-0', 'negative_zero', 'is negative zero; write 0'],
    ['-0.0', 'negative_zero', 'is negative zero'],
    ['-0e7', 'negative_zero', 'is negative zero'],
    [
      '9007199254740992',
      'unsafe_integer',
      'is outside the safe integer range -9007199254740991..9007199254740991',
    ],
    ['9007199254740993', 'unsafe_integer', 'is outside the safe integer range'],
    ['-9007199254740992', 'unsafe_integer', 'is outside the safe integer range'],
    ['1e400', 'unsafe_integer', 'is outside the safe integer range'],
    ['1e99999999999999999999', 'unsafe_integer', 'is outside the safe integer range'],
    ['1e-99999999999999999999', 'non_integer_number', 'is not a whole number'],
  ] as const)('rejects the number %s as %s', (literal, code, wording) => {
    const problems = problemsOf(`{"args":{"amount":${literal}}}`);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ code, path: ['args', 'amount'] });
    expect(problems[0]!.message).toContain(`number ${literal} at args.amount ${wording}`);
  });

  it('collects every semantic problem in document order, then the syntax error that ends parsing', () => {
    const problems = problemsOf('{"a":1.5,"a":-0,"b":[1e400] x');
    expect(problems.map((problem) => [problem.code, problem.path])).toEqual([
      ['non_integer_number', ['a']],
      ['duplicate_key', ['a']],
      ['negative_zero', ['a']],
      ['unsafe_integer', ['b', 0]],
      ['invalid_json', ['b']],
    ]);
  });

  it(`stops after ${MAX_JSON_PROBLEMS} problems, or maxProblems when given`, () => {
    const text = `[${Array.from({ length: 50 }, () => '0.5').join(',')}]`;
    expect(problemsOf(text)).toHaveLength(MAX_JSON_PROBLEMS);
    expect(problemsOf(text, { ...roomy, maxProblems: 3 })).toHaveLength(3);
  });
});

describe('parseStrictJson against JSON.parse', () => {
  const jsonish = fc.string({
    unit: fc.constantFrom(
      ...'{}[],:"\\/ \n\t0123456789-+.eEtrufalsn'.split(''),
      'true',
      'null',
      '"a"',
      '\\u00',
      '\uD800',
      '\u2028',
      '\uFEFF',
    ),
    maxLength: 40,
  });

  /** Valid JSON text with one character deleted, duplicated or replaced: mostly near-misses. */
  const mutatedJson = fc
    .tuple(
      safeJsonValue,
      fc.nat(),
      fc.constantFrom('delete', 'duplicate', 'replace'),
      fc.string({ maxLength: 1 }),
    )
    .map(([value, at, how, replacement]) => {
      const text = JSON.stringify(value, null, 1);
      const index = at % (text.length + 1);
      if (how === 'delete') return text.slice(0, index) + text.slice(index + 1);
      if (how === 'duplicate') return text.slice(0, index) + text.slice(index, index + 1) + text.slice(index);
      return text.slice(0, index) + replacement + text.slice(index + 1);
    });

  function agreesWithJsonParse(text: string): void {
    const result = parseStrictJson(text, uncapped);
    let parsed: { value: unknown } | undefined;
    try {
      // A leading BOM is the one thing the strict parser forgives and JSON.parse does not.
      parsed = { value: JSON.parse(text.startsWith('\uFEFF') ? text.slice(1) : text) };
    } catch {
      parsed = undefined;
    }
    if (parsed === undefined) {
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.problems.at(-1)!.code).toBe('invalid_json');
    } else if (result.ok) {
      expect(result.value).toEqual(parsed.value);
    } else {
      // Text JSON.parse accepts may only be refused for the reasons JSON.parse does not check.
      for (const problem of result.problems) expect(SEMANTIC_CODES).toContain(problem.code);
    }
  }

  it('never throws on arbitrary text', () => {
    const inputs = [fc.string(), fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme' }), jsonish];
    for (const input of inputs) {
      fc.assert(
        fc.property(input, (text) => {
          parseStrictJson(text, roomy);
          parseStrictJson(text, { maxDepth: 2, maxStringLength: 2, maxProblems: 1 });
        }),
      );
    }
  });

  it('accepts and rejects what JSON.parse does, apart from duplicate keys, non-integers and limits', () => {
    fc.assert(fc.property(jsonish, agreesWithJsonParse), { numRuns: 2000 });
    fc.assert(fc.property(mutatedJson, agreesWithJsonParse), { numRuns: 2000 });
    fc.assert(fc.property(fc.string({ unit: 'binary' }), agreesWithJsonParse));
  });

  it('finds a duplicate key exactly when the text has one', () => {
    const entries = fc.array(fc.tuple(fc.constantFrom('a', 'b', 'c', '__proto__'), fc.integer()), {
      maxLength: 6,
    });
    fc.assert(
      fc.property(entries, (pairs) => {
        const text = `{${pairs.map(([key, value]) => `${JSON.stringify(key)}:${value}`).join(',')}}`;
        const keys = pairs.map(([key]) => key);
        const hasDuplicate = new Set(keys).size !== keys.length;
        const result = parseStrictJson(text, roomy);
        expect(result.ok).toBe(!hasDuplicate);
        if (result.ok) expect(result.value).toEqual(Object.fromEntries(pairs));
      }),
    );
  });
});

describe('checkJsonValue', () => {
  const limits: JsonLimits = { maxDepth: 4, maxStringLength: 8 };

  it('accepts JSON values, including null-prototype objects, and returns the same value', () => {
    fc.assert(
      fc.property(safeJsonValue, (value) => {
        expect(checkJsonValue(value, roomy)).toEqual({ ok: true, value });
      }),
    );
    const bare = Object.assign(Object.create(null) as object, { a: 1 });
    const result = checkJsonValue(bare, roomy);
    expect(result.ok && result.value).toBe(bare);
  });

  it.each([
    [
      'undefined',
      { note: undefined },
      ['note'],
      'value at note is not JSON: undefined (leave the key out instead)',
    ],
    ['a function', { run: () => 1 }, ['run'], 'value at run is not JSON: a function'],
    ['a symbol value', [Symbol('x')], [0], 'value at [0] is not JSON: a symbol'],
    [
      'a bigint',
      { amount: 10n },
      ['amount'],
      'value at amount is not JSON: the bigint 10n (send a number within -9007199254740991..9007199254740991)',
    ],
    [
      'a Date',
      { when: new Date(0) },
      ['when'],
      'value at when is not JSON: an instance of Date (send plain objects and arrays)',
    ],
    [
      'a Map',
      { index: new Map() },
      ['index'],
      'value at index is not JSON: an instance of Map (send plain objects and arrays)',
    ],
    [
      'a sparse array',
      { list: sparse() },
      ['list', 1],
      'value at list[1] is not JSON: a hole in a sparse array',
    ],
    [
      'a symbol key',
      { [Symbol('k')]: 1 },
      [],
      'value at the top level is not JSON: it has the symbol key Symbol(k)',
    ],
    [
      'a getter',
      Object.defineProperty({}, 'total', { get: () => 1, enumerable: true }),
      ['total'],
      'value at total is not JSON: a getter/setter property',
    ],
    [
      'a non-enumerable property',
      Object.defineProperty({}, 'hidden', { value: 1, enumerable: false }),
      ['hidden'],
      'value at hidden is not JSON: a non-enumerable property (it would be lost when serialized)',
    ],
  ])('rejects %s as not_json and names its path', (_label, value, path, message) => {
    const result = checkJsonValue(value, limits);
    expect(result).toEqual({
      ok: false,
      problem: { code: 'not_json', path, message },
      problems: [{ code: 'not_json', path, message }],
    });
  });

  it('rejects a cycle instead of walking it forever', () => {
    const plan: { steps: unknown[] } = { steps: [] };
    plan.steps.push(plan);
    const result = checkJsonValue(plan, roomy);
    expect(!result.ok && result.problems).toEqual([
      {
        code: 'not_json',
        path: ['steps', 0],
        message: 'value at steps[0] is not JSON: it contains itself (a cycle)',
      },
    ]);
  });

  it('reports every problem with its path, up to the cap', () => {
    const result = checkJsonValue(
      { a: 1.5, b: -0, c: 2 ** 60, d: '123456789', long_key_x: [[[[]]]] },
      limits,
    );
    expect(!result.ok && result.problems.map((problem) => [problem.code, problem.path])).toEqual([
      ['non_integer_number', ['a']],
      ['negative_zero', ['b']],
      ['unsafe_integer', ['c']],
      ['string_too_long', ['d']],
      ['string_too_long', ['long_key_x']],
      ['too_deep', ['long_key_x', 0, 0, 0]],
    ]);
    const many = checkJsonValue(
      Array.from({ length: 50 }, () => 0.5),
      limits,
    );
    expect(!many.ok && many.problems.length).toBe(MAX_JSON_PROBLEMS);
  });

  it('reports the same problems at the same paths as parseStrictJson does for the same value as text', () => {
    const looseNumber = fc.oneof(
      fc.integer({ min: -5, max: 5 }),
      fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Object.is(n, -0)),
      fc.constantFrom(2 ** 53, -(2 ** 53), 1e21, 0.5),
    );
    const looseValue: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
      value: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        fc.constant(null),
        looseNumber,
        fc.string({ maxLength: 10 }),
        fc.array(tie('value'), { maxLength: 4 }),
        fc.dictionary(fc.string({ maxLength: 10 }), tie('value'), { maxKeys: 4 }),
      ),
    })).value;
    const tight: JsonLimits = { maxDepth: 3, maxStringLength: 6, maxProblems: 8 };
    fc.assert(
      fc.property(looseValue, (value) => {
        const fromText = parseStrictJson(JSON.stringify(value), tight);
        const fromValue = checkJsonValue(value, tight);
        const textProblems = fromText.ok ? [] : fromText.problems;
        let valueProblems = fromValue.ok ? [] : [...fromValue.problems];
        // The parser has to stop at the first over-deep container; the value check goes on.
        const deep = valueProblems.findIndex((problem) => problem.code === 'too_deep');
        if (deep !== -1) valueProblems = valueProblems.slice(0, deep + 1);
        expect(textProblems).toEqual(valueProblems);
      }),
      { numRuns: 1000 },
    );
  });
});
