/** A JSON value as Countersign accepts it: numbers are safe integers (docs/architecture.md §2). */
export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;
export type JsonObject = { [key: string]: JsonValue };

/** True for a plain object (not an array, not null). */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The value at `path` (object keys as strings, array indexes as numbers), or undefined when any part
 * is missing. Only own properties count, so a key like `constructor` never reaches the prototype.
 */
export function valueAt(
  root: JsonValue | undefined,
  path: readonly (string | number)[],
): JsonValue | undefined {
  let value: JsonValue | undefined = root;
  for (const key of path) {
    if (typeof key === 'number' && Array.isArray(value)) value = value[key];
    else if (typeof key === 'string' && isJsonObject(value) && Object.hasOwn(value, key)) value = value[key];
    else return undefined;
  }
  return value;
}
