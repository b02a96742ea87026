/**
 * The strict check of an already built value (`checkJsonValue`): it rejects what `parseStrictJson`
 * rejects, and what text cannot express (strict-json-problems.ts).
 */
import type { JsonValue } from './json.ts';
import { formatJsonPath } from './json-path.ts';
import {
  type JsonCheck,
  type JsonLimits,
  type JsonValueProblem,
  MAX_JSON_PROBLEMS,
  numberProblem,
  SAFE_RANGE,
  Stop,
  stringTooLong,
  tooDeep,
} from './strict-json-problems.ts';

/**
 * Checks that an already-built value (an object submission, not text) is JSON that
 * `parseStrictJson` would also accept, reporting every problem up to `maxProblems` in document
 * order. Walks recursively; recursion depth is bounded by `limits.maxDepth`.
 */
export function checkJsonValue(value: unknown, limits: JsonLimits): JsonCheck<JsonValueProblem> {
  const checker = new Checker(limits);
  try {
    checker.check(value, 0);
  } catch (error) {
    if (!(error instanceof Stop)) throw error;
  }
  const problems = checker.problems;
  if (problems.length > 0) return { ok: false, problem: problems[0]!, problems };
  return { ok: true, value: value as JsonValue };
}

class Checker {
  readonly problems: JsonValueProblem[] = [];
  private readonly limits: JsonLimits;
  private readonly maxProblems: number;
  private readonly path: (string | number)[] = [];
  /** Containers on the current path, to report a cycle instead of walking it forever. */
  private readonly open = new Set<object>();

  constructor(limits: JsonLimits) {
    this.limits = limits;
    this.maxProblems = Math.max(1, limits.maxProblems ?? MAX_JSON_PROBLEMS);
  }

  check(value: unknown, depth: number): void {
    switch (typeof value) {
      case 'boolean':
        return;
      case 'string':
        if (value.length > this.limits.maxStringLength) {
          this.report(stringTooLong('string', value, [...this.path], this.limits.maxStringLength));
        }
        return;
      case 'number':
        this.checkNumber(value);
        return;
      case 'object':
        if (value === null) return;
        this.checkContainer(value, depth + 1);
        return;
      case 'bigint':
        this.notJson(`the bigint ${value}n (send a number within ${SAFE_RANGE})`);
        return;
      default:
        this.notJson(value === undefined ? 'undefined (leave the key out instead)' : `a ${typeof value}`);
    }
  }

  private checkNumber(value: number): void {
    if (Number.isSafeInteger(value)) {
      if (value === 0 && 1 / value < 0) this.report(numberProblem('negative_zero', '-0', [...this.path]));
      return;
    }
    const code = Number.isInteger(value) ? 'unsafe_integer' : 'non_integer_number';
    this.report(numberProblem(code, String(value), [...this.path]));
  }

  private checkContainer(container: object, depth: number): void {
    const isArray = Array.isArray(container);
    const proto: unknown = Object.getPrototypeOf(container);
    if (isArray ? proto !== Array.prototype : proto !== Object.prototype && proto !== null) {
      const name = (container as { constructor?: { name?: unknown } }).constructor?.name;
      this.notJson(
        typeof name === 'string' && name !== ''
          ? `an instance of ${name} (send plain objects and arrays)`
          : 'not a plain object',
      );
      return;
    }
    if (depth > this.limits.maxDepth) {
      this.report(tooDeep([...this.path], this.limits.maxDepth));
      return;
    }
    if (this.open.has(container)) {
      this.notJson('it contains itself (a cycle)');
      return;
    }
    this.open.add(container);
    if (isArray) this.checkArray(container, depth);
    else this.checkObject(container, depth);
    this.open.delete(container);
  }

  private checkArray(array: readonly unknown[], depth: number): void {
    for (let index = 0; index < array.length; index++) {
      this.path.push(index);
      // `in` tells a hole from an explicit undefined; both are rejected, with different words.
      if (index in array) this.check(array[index], depth);
      else this.notJson('a hole in a sparse array');
      this.path.pop();
    }
  }

  private checkObject(object: object, depth: number): void {
    for (const key of Reflect.ownKeys(object)) {
      if (typeof key === 'symbol') {
        this.notJson(`it has the symbol key ${String(key)}`);
        continue;
      }
      this.path.push(key);
      const descriptor = Object.getOwnPropertyDescriptor(object, key);
      if (descriptor === undefined || !('value' in descriptor)) {
        this.notJson('a getter/setter property');
      } else if (!descriptor.enumerable) {
        // JSON.stringify would drop it silently; refuse rather than lose data.
        this.notJson('a non-enumerable property (it would be lost when serialized)');
      } else {
        if (key.length > this.limits.maxStringLength) {
          this.report(stringTooLong('key', key, [...this.path], this.limits.maxStringLength));
        }
        this.check(descriptor.value, depth);
      }
      this.path.pop();
    }
  }

  private notJson(what: string): void {
    this.report({
      code: 'not_json',
      path: [...this.path],
      message: `value at ${formatJsonPath(this.path)} is not JSON: ${what}`,
    });
  }

  private report(problem: JsonValueProblem): void {
    this.problems.push(problem);
    if (this.problems.length >= this.maxProblems) throw new Stop();
  }
}
