import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CanonicalJsonError,
  canonicalJson,
  isCanonicalJsonError,
  sha256Hex,
} from '../../src/pipeline/canonical-json.ts';
import { type DigestedPlan, digestPlan, planDigest, stepDigest } from '../../src/pipeline/digest.ts';
import type { JsonObject, JsonValue } from '../../src/pipeline/json.ts';
import { parseStrictJson } from '../../src/pipeline/strict-json.ts';
import {
  allPaths,
  jsonString,
  reorderKeys,
  replaceAt,
  safeJsonObject,
  safeJsonValue,
} from './json-arbitraries.ts';

interface VectorCase {
  name: string;
  kind: 'value' | 'step' | 'plan';
  input: JsonValue;
  canonical: string;
  sha256: string;
}

const vectorsText = readFileSync(new URL('../vectors/canonical-json.json', import.meta.url), 'utf8');
const vectors = JSON.parse(vectorsText) as { _about: string[]; cases: VectorCase[] };

/** What each vector kind hashes, built independently of digest.ts so the two are checked against each other. */
function wrapperFor(vector: VectorCase): JsonValue {
  if (vector.kind === 'value') return vector.input;
  const input = vector.input as JsonObject;
  if (vector.kind === 'step') return { args: input.args!, ...dependencies(input), tool: input.tool! };
  const steps = input.steps as JsonObject[];
  return {
    agent: input.agent!,
    expires_at: input.expiresAt!,
    run_id: input.runId!,
    steps: steps.map((step) => ({ args: step.args!, ...dependencies(step), id: step.id!, tool: step.tool! })),
  };
}

/** Contract 2: `depends_on`, sorted and unique, only when the step has dependencies. */
function dependencies(step: JsonObject): { depends_on?: JsonValue } {
  const given = (step.dependsOn ?? []) as string[];
  return given.length === 0 ? {} : { depends_on: [...new Set(given)].sort() };
}

function thrownBy(run: () => unknown): CanonicalJsonError {
  try {
    run();
  } catch (error) {
    if (isCanonicalJsonError(error)) return error;
    throw error;
  }
  throw new Error('expected a CanonicalJsonError');
}

describe('published test vectors', () => {
  it('cover every kind, with at least 16 cases and an explanation', () => {
    expect(vectors.cases.length).toBeGreaterThanOrEqual(16);
    expect(new Set(vectors.cases.map((vector) => vector.kind))).toEqual(new Set(['value', 'step', 'plan']));
    expect(vectors._about.join(' ')).toContain('UTF-16 code units');
  });

  it('parse under the strict parser to the same inputs JSON.parse sees', () => {
    const strict = parseStrictJson(vectorsText, { maxDepth: 64, maxStringLength: 10_000 });
    expect(strict).toEqual({ ok: true, value: vectors });
  });

  describe.each(vectors.cases)('$kind: $name', (vector) => {
    it('has the published canonical text and digest', () => {
      const canonical = canonicalJson(wrapperFor(vector));
      expect(canonical).toBe(vector.canonical);
      expect(sha256Hex(canonical)).toBe(vector.sha256);
    });

    if (vector.kind === 'step') {
      it('matches stepDigest', () => {
        expect(stepDigest(vector.input as unknown as { tool: string; args: JsonObject })).toBe(vector.sha256);
      });
    }
    if (vector.kind === 'plan') {
      it('matches planDigest', () => {
        expect(planDigest(vector.input as unknown as DigestedPlan)).toBe(vector.sha256);
      });

      it('matches digestPlan, the one-pass form validate uses', () => {
        const plan = vector.input as unknown as DigestedPlan;
        expect(digestPlan(plan)).toEqual({
          plan: vector.sha256,
          steps: plan.steps.map((step) => stepDigest(step)),
        });
      });
    }
  });
});

describe('canonicalJson', () => {
  it('sorts keys by UTF-16 code units, so an emoji key sorts before U+FB01', () => {
    expect(canonicalJson({ '\uFB01': 1, '\u{1F600}': 2, z: 3 })).toBe('{"z":3,"\u{1F600}":2,"\uFB01":1}');
  });

  it('sorts integer-like keys as strings, not numerically', () => {
    expect(canonicalJson({ 9: 'a', 10: 'b', 1: 'c' })).toBe('{"1":"c","10":"b","9":"a"}');
  });

  it('writes a "__proto__" own key like any other key', () => {
    const value = JSON.parse('{"b":1,"__proto__":{"x":1}}') as JsonObject;
    expect(canonicalJson(value)).toBe('{"__proto__":{"x":1},"b":1}');
  });

  it('accepts objects with a null prototype', () => {
    const value = Object.assign(Object.create(null) as JsonObject, { b: 2, a: 1 });
    expect(canonicalJson(value)).toBe('{"a":1,"b":2}');
  });

  it('writes every string exactly as JSON.stringify does', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary' }), jsonString), (text) => {
        expect(canonicalJson(text)).toBe(JSON.stringify(text));
        expect(canonicalJson({ [text]: 1 })).toBe(`{${JSON.stringify(text)}:1}`);
      }),
    );
    expect(canonicalJson('\uD800')).toBe('"\\ud800"');
  });

  it('gives the same text whatever order keys were inserted in', () => {
    fc.assert(
      fc.property(safeJsonValue, fc.integer(), (value, seed) => {
        expect(canonicalJson(reorderKeys(value, seed))).toBe(canonicalJson(value));
      }),
    );
  });

  it('produces JSON that parses back to an equal value and is its own canonical form', () => {
    fc.assert(
      fc.property(safeJsonValue, (value) => {
        const text = canonicalJson(value);
        const reparsed = JSON.parse(text) as JsonValue;
        expect(reparsed).toEqual(value);
        expect(canonicalJson(reparsed)).toBe(text);
      }),
    );
  });

  it.each([
    ['a fraction', { amount: 12.5 }, 'non_integer_number', ['amount']],
    ['NaN', [Number.NaN], 'non_integer_number', [0]],
    ['Infinity', { a: [1, { b: Number.POSITIVE_INFINITY }] }, 'non_integer_number', ['a', 1, 'b']],
    ['-0', { refund: -0 }, 'negative_zero', ['refund']],
    ['2^53', [2 ** 53], 'unsafe_integer', [0]],
    ['undefined in an object', { note: undefined }, 'not_json', ['note']],
    ['undefined in an array', [1, undefined], 'not_json', [1]],
    ['a sparse array', { list: Object.assign([1], { 2: 3 }) }, 'not_json', ['list', 1]],
    ['a function', { run: () => 1 }, 'not_json', ['run']],
    ['a symbol', { tag: Symbol('x') }, 'not_json', ['tag']],
    ['a bigint', { amount: 10n }, 'not_json', ['amount']],
    ['a Date', { when: new Date(0) }, 'not_json', ['when']],
    ['a Map', { index: new Map() }, 'not_json', ['index']],
    ['an array subclass', { list: new (class List extends Array {})() }, 'not_json', ['list']],
  ])('throws a CanonicalJsonError for %s, naming its path', (_label, value, code, path) => {
    const error = thrownBy(() => canonicalJson(value as unknown as JsonValue));
    expect(error).toBeInstanceOf(CanonicalJsonError);
    expect(error.code).toBe(code);
    expect(error.path).toEqual(path);
  });

  it('says what and where in the error message', () => {
    const error = thrownBy(() => canonicalJson({ steps: [{ args: { amount: 12.5 } }] }));
    expect(error.message).toBe('12.5 is not an integer at steps[0].args.amount (non_integer_number)');
    expect(error.name).toBe('CanonicalJsonError');
  });

  it('does not treat other errors as CanonicalJsonError', () => {
    expect(isCanonicalJsonError(new Error('x'))).toBe(false);
  });
});

describe('sha256Hex', () => {
  it('hashes the UTF-8 bytes and writes lower-case hex', () => {
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(sha256Hex('é\u{1F600}')).toBe('1184d1f608158eea09d297565575892231550c403aaa913008d867a97cfd5c76');
  });
});

describe('stepDigest', () => {
  const step = { tool: 'refund_payment', args: { invoice_id: 'in_74119', amount: 125000 } };

  it('covers tool and args only: the step id does not change it', () => {
    expect(stepDigest({ ...step, id: 's1' } as typeof step)).toBe(stepDigest(step));
    expect(stepDigest(step)).toBe(sha256Hex(canonicalJson({ args: step.args, tool: step.tool })));
  });

  it('changes when the tool changes', () => {
    expect(stepDigest({ ...step, tool: 'refund_payment_v2' })).not.toBe(stepDigest(step));
  });

  it('changes when any value anywhere in the args changes', () => {
    fc.assert(
      fc.property(safeJsonObject, fc.nat(), safeJsonValue, (args, pick, replacement) => {
        const paths = allPaths(args).slice(1); // not the args object itself
        const path = paths[pick % paths.length]!;
        const changed = replaceAt(args, path, replacement) as JsonObject;
        fc.pre(canonicalJson(changed) !== canonicalJson(args));
        expect(stepDigest({ tool: 't', args: changed })).not.toBe(stepDigest({ tool: 't', args }));
      }),
    );
  });

  it('changes when a key is added, removed or renamed', () => {
    fc.assert(
      fc.property(safeJsonObject, fc.string(), (args, extra) => {
        const base = stepDigest({ tool: 't', args });
        const [first] = Object.keys(args);
        const { [first!]: removedValue, ...rest } = args;
        expect(stepDigest({ tool: 't', args: rest })).not.toBe(base);
        if (!Object.hasOwn(args, extra)) {
          expect(stepDigest({ tool: 't', args: { ...args, [extra]: null } })).not.toBe(base);
          expect(stepDigest({ tool: 't', args: { ...rest, [extra]: removedValue! } })).not.toBe(base);
        }
      }),
    );
  });
});

describe('planDigest', () => {
  const plan: DigestedPlan = {
    runId: 'run_1',
    agent: 'freight-ops',
    expiresAt: '2025-06-01T14:00:00.000Z',
    steps: [
      { id: 's1', tool: 'lookup_invoice', args: { invoice_id: 'in_1' } },
      { id: 's2', tool: 'refund_payment', args: { invoice_id: 'in_1', amount: 500 } },
    ],
  };

  it('ignores summary and context', () => {
    const withProse = { ...plan, summary: 'Refund', context: { ticket: '#1' } };
    expect(planDigest(withProse)).toBe(planDigest(plan));
  });

  it('changes with the run, the agent, the expiry, a step id, or the order of steps', () => {
    const digest = planDigest(plan);
    const [first, second] = plan.steps;
    for (const changed of [
      { ...plan, runId: 'run_2' },
      { ...plan, agent: 'other' },
      { ...plan, expiresAt: '2025-06-01T14:00:01.000Z' },
      { ...plan, steps: [{ ...first!, id: 's9' }, second!] },
      { ...plan, steps: [second!, first!] },
    ]) {
      expect(planDigest(changed)).not.toBe(digest);
    }
  });
});
