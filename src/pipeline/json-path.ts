/** Identifier-like keys are written with a dot; anything else is quoted like JSON. */
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/**
 * A path inside a JSON value as a person reads it: `['items', 0, 'sku']` → `items[0].sku`, and keys
 * that are not plain identifiers quoted (`["ship to"]`) so `{ "a.b": 1 }` and `{ a: { b: 1 } }` read
 * differently. Used for argument paths in diffs and diagnostics; empty for the empty path.
 */
export function describeFieldPath(path: readonly (string | number)[]): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (IDENTIFIER.test(segment)) out += out === '' ? segment : `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}

/**
 * Like `describeFieldPath`, for a place in a whole JSON document: `the top level` for the empty path.
 *
 * @example formatJsonPath(['steps', 1, 'args']) // 'steps[1].args'
 */
export function formatJsonPath(path: readonly (string | number)[]): string {
  return path.length === 0 ? 'the top level' : describeFieldPath(path);
}
