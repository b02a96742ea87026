const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/**
 * A path inside a JSON value as a person reads it: `steps[1].args.amount`, `meta["a b"]`, or
 * `the top level` for the empty path.
 *
 * @example formatJsonPath(['steps', 1, 'args']) // 'steps[1].args'
 */
export function formatJsonPath(path: readonly (string | number)[]): string {
  if (path.length === 0) return 'the top level';
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (IDENTIFIER.test(segment)) out += out === '' ? segment : `.${segment}`;
    // Quoted like JSON so empty, dotted or odd keys stay unambiguous.
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}
