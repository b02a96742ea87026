/**
 * What the strict entry points for plan input reject, and how they say so: as text
 * (`parseStrictJson`, strict-json.ts) or as an already-built value (`checkJsonValue`,
 * check-json-value.ts). Both reject the same things (docs/architecture.md §2): numbers that are not safe integers,
 * `-0`, over-deep nesting and over-long strings; the parser also rejects duplicate keys, which
 * `JSON.parse` would silently collapse to the last one, and the value check rejects what text
 * cannot express (undefined, functions, bigint, class instances, sparse arrays, cycles).
 * Neither throws for bad input: problems are returned as values, up to `maxProblems`.
 */
import type { JsonValue } from './json.ts';
import { formatJsonPath } from './json-path.ts';

/** Problem codes `parseStrictJson` reports; each is also a `parse` diagnostic code. */
export type StrictJsonProblemCode =
  | 'invalid_json'
  | 'duplicate_key'
  | 'too_deep'
  | 'string_too_long'
  | 'non_integer_number'
  | 'negative_zero'
  | 'unsafe_integer';

/** Problem codes `checkJsonValue` reports: text-only codes replaced by `not_json`. */
export type JsonValueProblemCode =
  | Exclude<StrictJsonProblemCode, 'invalid_json' | 'duplicate_key'>
  | 'not_json';

/** One problem, with where it is and a message for the person who must fix it. */
export interface JsonProblem<Code extends string> {
  readonly code: Code;
  /** Path to the offending value (or object member, for key problems); `[]` is the top level. */
  readonly path: readonly (string | number)[];
  readonly message: string;
}

export type StrictJsonProblem = JsonProblem<StrictJsonProblemCode>;
export type JsonValueProblem = JsonProblem<JsonValueProblemCode>;

/** Limits both entry points enforce. */
export interface JsonLimits {
  /** Deepest allowed nesting of arrays and objects: `[]` is depth 1, `[[]]` depth 2, `0` forbids both. */
  readonly maxDepth: number;
  /** Longest allowed string, keys included, in UTF-16 code units (what `.length` counts). */
  readonly maxStringLength: number;
  /** Stop after this many problems; defaults to `MAX_JSON_PROBLEMS`. */
  readonly maxProblems?: number;
}

/** Default cap on reported problems, so a hostile payload cannot produce a huge diagnostic list. */
export const MAX_JSON_PROBLEMS = 20;

/** Result of a strict check: the value, or at least one problem (`problem` is `problems[0]`). */
export type JsonCheck<Problem> =
  | { readonly ok: true; readonly value: JsonValue }
  | { readonly ok: false; readonly problem: Problem; readonly problems: readonly Problem[] };

/** The safe integer range, as messages write it. */
export const SAFE_RANGE = `${Number.MIN_SAFE_INTEGER}..${Number.MAX_SAFE_INTEGER}`;

// ---------------------------------------------------------------------------------------------
// Shared wording, so both entry points say the same thing about the same problem.

/** Internal signal: parsing or checking cannot (or need not) go on. Never escapes the two entry points. */
export class Stop {}

/** A number that is not a safe integer, or is -0, at `path`; `shown` is how it was written. */
export function numberProblem(
  code: 'non_integer_number' | 'negative_zero' | 'unsafe_integer',
  shown: string,
  path: readonly (string | number)[],
): JsonProblem<typeof code> {
  const at = `number ${truncate(shown)} at ${formatJsonPath(path)}`;
  const message =
    code === 'negative_zero'
      ? `${at} is negative zero; write 0`
      : code === 'unsafe_integer'
        ? `${at} is outside the safe integer range ${SAFE_RANGE}`
        : `${at} is not a whole number; only integers are allowed (amounts are in minor units such as cents)`;
  return { code, path, message };
}

/** A string or key longer than `limit`. */
export function stringTooLong(
  what: 'string' | 'key',
  text: string,
  path: readonly (string | number)[],
  limit: number,
): JsonProblem<'string_too_long'> {
  // A key's path includes the key itself; the message names the object it sits in.
  const where =
    what === 'key'
      ? `key ${quote(text)} at ${formatJsonPath(path.slice(0, -1))}`
      : `string at ${formatJsonPath(path)}`;
  return {
    code: 'string_too_long',
    path,
    message: `${where} is ${text.length} characters long; the limit is ${limit}`,
  };
}

/** A key an object already has (`path` ends with the key). */
export function duplicateKey(key: string, path: readonly (string | number)[]): JsonProblem<'duplicate_key'> {
  const container = path.slice(0, -1);
  return {
    code: 'duplicate_key',
    path,
    message: `duplicate key ${quote(key)} at ${formatJsonPath(container)}`,
  };
}

/** Nesting deeper than `limit` at `path`. */
export function tooDeep(path: readonly (string | number)[], limit: number): JsonProblem<'too_deep'> {
  return {
    code: 'too_deep',
    path,
    message: `value at ${formatJsonPath(path)} nests arrays and objects deeper than the limit of ${limit} levels`,
  };
}

function truncate(text: string): string {
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

/** A key or string inside a message: JSON-quoted, cut at 40 characters. */
function quote(text: string): string {
  return JSON.stringify(truncate(text));
}
