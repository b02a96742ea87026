/** How the reader words a syntax error: where it is (line, column) and what was found there. */
import type { StrictJsonProblem } from './strict-json-problems.ts';

const VISIBLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u;

/** What is at `pos`, for "found …": the character, its code point when invisible, or the end. */
function describeCharAt(text: string, pos: number): string {
  if (pos >= text.length) return 'the end of the input';
  const c = text.codePointAt(pos)!;
  const char = String.fromCodePoint(c);
  // Invisible or ambiguous characters (controls, odd spaces, lone surrogates) are named by code.
  if (!VISIBLE.test(char)) return `U+${c.toString(16).toUpperCase().padStart(4, '0')}`;
  return char === "'" ? `"'"` : `'${char}'`;
}

/** 1-based line and column (in UTF-16 code units) of `pos`; `start` is past a BOM, which is not counted. */
function lineAndColumn(text: string, start: number, pos: number): { line: number; column: number } {
  let line = 1;
  let lineStart = start;
  for (let index = text.indexOf('\n', start); index !== -1 && index < pos; ) {
    line++;
    lineStart = index + 1;
    index = text.indexOf('\n', lineStart);
  }
  return { line, column: pos - lineStart + 1 };
}

/** `invalid JSON at line 3, column 7: expected ':' after a key, found '}'` for the reader at `pos`. */
export function syntaxProblem(
  text: string,
  start: number,
  pos: number,
  path: readonly (string | number)[],
  expected: string,
  showFound: boolean,
): StrictJsonProblem {
  const { line, column } = lineAndColumn(text, start, pos);
  const found = showFound ? `, found ${describeCharAt(text, pos)}` : '';
  return {
    code: 'invalid_json',
    path,
    message: `invalid JSON at line ${line}, column ${column}: ${expected}${found}`,
  };
}
