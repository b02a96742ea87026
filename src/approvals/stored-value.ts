/** Stored values anything may have written, read against a schema: a failure is a message, never a throw. */
import type { z } from 'zod';

/** A value read, or why it could not be. */
export type Parsed<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly message: string };

/** `value` checked against `schema`; the message names the first issue and where it is. */
export function parseWith<T>(schema: z.ZodType<T>, value: unknown): Parsed<T> {
  const result = schema.safeParse(value);
  if (result.success) return { ok: true, value: result.data };
  const issue = result.error.issues[0];
  const where = issue && issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
  return { ok: false, message: `${where}${issue?.message ?? 'invalid'}` };
}

/** `text` parsed as JSON, then checked as {@link parseWith} does. */
export function parseJsonWith<T>(schema: z.ZodType<T>, text: string): Parsed<T> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, message: `not JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
  return parseWith(schema, value);
}
