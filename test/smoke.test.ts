import { expect, it } from 'vitest';
import { isJsonObject } from '../src/pipeline/json.ts';

it('recognises plain objects', () => {
  expect(isJsonObject({})).toBe(true);
  expect(isJsonObject([])).toBe(false);
});
