import { z } from 'zod';
import { ID_PATTERN, RUN_ID_PATTERN } from '../src/pipeline/index.ts';

/**
 * What a button (or a modal's private_metadata) points at: a run, the version it was shown for, and
 * for per-step buttons (`remove_step`, `revert_step`) the step. The version is what lets a click on a
 * stale card be refused.
 */
export interface ButtonValue {
  readonly runId: string;
  readonly version: number;
  readonly stepId?: string;
  /** For "Edit <step>" (a consistency warning): the argument to put the cursor in, its path joined with `.`. */
  readonly argPath?: string;
}

/**
 * The wire form: compact JSON `{"r":"<runId>","v":2}` or `{"r":"<runId>","v":2,"s":"s4"}`. Run and step
 * ids are limited by the pipeline (128 and 64 characters), so a value stays far below Slack's 2000.
 */
export const buttonValueSchema = z
  .strictObject({
    r: z.string().regex(RUN_ID_PATTERN),
    v: z.int().min(1),
    s: z.string().regex(ID_PATTERN).optional(),
    a: z.string().min(1).max(200).optional(),
  })
  .transform(
    ({ r, v, s, a }): ButtonValue => ({
      runId: r,
      version: v,
      ...(s === undefined ? {} : { stepId: s }),
      ...(a === undefined ? {} : { argPath: a }),
    }),
  );

/**
 * Encodes a button value.
 * @example encodeButtonValue({ runId: 'run-1', version: 2, stepId: 's4' }) // '{"r":"run-1","v":2,"s":"s4"}'
 */
export function encodeButtonValue(value: ButtonValue): string {
  return JSON.stringify({
    r: value.runId,
    v: value.version,
    ...(value.stepId === undefined ? {} : { s: value.stepId }),
    ...(value.argPath === undefined ? {} : { a: value.argPath }),
  });
}

export type ButtonValueResult =
  | { readonly ok: true; readonly value: ButtonValue }
  | { readonly ok: false; readonly message: string };

/**
 * Parses a button value from a Slack payload. Never throws: a value this app did not write comes back
 * as `{ ok: false }`.
 * @example parseButtonValue('{"r":"run-1","v":2}') // { ok: true, value: { runId: 'run-1', version: 2 } }
 */
export function parseButtonValue(text: string): ButtonValueResult {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, message: 'the button value is not JSON' };
  }
  const parsed = buttonValueSchema.safeParse(json);
  return parsed.success
    ? { ok: true, value: parsed.data }
    : { ok: false, message: `the button value is not a run reference: ${z.prettifyError(parsed.error)}` };
}
