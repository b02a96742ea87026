import type { ValidationContext } from './context.ts';
import type { Diagnostic, Phase } from './diagnostics.ts';
import { authorize } from './phases/authorize.ts';
import { parse } from './phases/parse.ts';
import { resolve } from './phases/resolve.ts';
import { type } from './phases/type.ts';
import type { ValidatedPlan } from './plan.ts';

/** The outcome of `validate`: the frozen plan, or the phase that rejected it with all its diagnostics. */
export type ValidationResult =
  | { readonly ok: true; readonly plan: ValidatedPlan }
  | { readonly ok: false; readonly phase: Phase; readonly diagnostics: readonly Diagnostic[] };

/**
 * Runs parse → resolve → type → authorize. Never throws for bad input: raw text, any JS value,
 * or an edited plan (with `ctx.edit`) all come back as a result.
 * @example
 * const result = validate(requestBody, { config: config.pipeline, now: Date.now() });
 * if (!result.ok) console.log(result.phase, result.diagnostics.map((d) => d.message));
 */
export function validate(raw: unknown, ctx: ValidationContext): ValidationResult {
  const parsed = parse(raw, ctx);
  if (!parsed.ok) return { ok: false, phase: 'parse', diagnostics: parsed.diagnostics };
  const resolved = resolve(parsed.value, ctx);
  if (!resolved.ok) return { ok: false, phase: 'resolve', diagnostics: resolved.diagnostics };
  const typed = type(resolved.value, ctx);
  if (!typed.ok) return { ok: false, phase: 'type', diagnostics: typed.diagnostics };
  const authorized = authorize(typed.value, ctx);
  if (!authorized.ok) return { ok: false, phase: 'authorize', diagnostics: authorized.diagnostics };
  return { ok: true, plan: authorized.value };
}
