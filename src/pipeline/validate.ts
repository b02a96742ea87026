import type { ValidationContext } from './context.ts';
import type { Diagnostic, Phase } from './diagnostics.ts';
import { type HookResults, type HookRunOptions, runHooks } from './hooks.ts';
import { authorize } from './phases/authorize.ts';
import { parse } from './phases/parse.ts';
import { resolve } from './phases/resolve.ts';
import { type } from './phases/type.ts';
import type { PlanEnvelope, ValidatedPlan } from './plan.ts';

/** The outcome of `validate`: the frozen plan, or the phase that rejected it with all its diagnostics. */
export type ValidationResult =
  | { readonly ok: true; readonly plan: ValidatedPlan }
  | { readonly ok: false; readonly phase: Phase; readonly diagnostics: readonly Diagnostic[] };

type Typed = { readonly ok: true; readonly plan: PlanEnvelope } | Extract<ValidationResult, { ok: false }>;

/** parse → resolve → type: pure and synchronous. */
function typed(raw: unknown, ctx: ValidationContext): Typed {
  const parsed = parse(raw, ctx);
  if (!parsed.ok) return { ok: false, phase: 'parse', diagnostics: parsed.diagnostics };
  const resolved = resolve(parsed.value, ctx);
  if (!resolved.ok) return { ok: false, phase: 'resolve', diagnostics: resolved.diagnostics };
  const checked = type(resolved.value, ctx);
  if (!checked.ok) return { ok: false, phase: 'type', diagnostics: checked.diagnostics };
  return { ok: true, plan: checked.value };
}

function authorized(plan: PlanEnvelope, ctx: ValidationContext, hooks: HookResults): ValidationResult {
  const result = authorize(plan, ctx, hooks);
  if (!result.ok) return { ok: false, phase: 'authorize', diagnostics: result.diagnostics };
  return { ok: true, plan: result.value };
}

/**
 * Runs parse → resolve → type, the tools' hooks (in parallel, each within its time budget), then
 * authorize. Never throws for bad input: raw text, any JS value, or an edited plan (with `ctx.edit`)
 * all come back as a result; a hook that fails leaves its step unverified, never the call rejected.
 * @example
 * const result = await validate(requestBody, { config: config.pipeline, now: Date.now() });
 * if (!result.ok) console.log(result.phase, result.diagnostics.map((d) => d.message));
 */
export async function validate(
  raw: unknown,
  ctx: ValidationContext,
  options: HookRunOptions = {},
): Promise<ValidationResult> {
  const early = typed(raw, ctx);
  if (!early.ok) return early;
  return authorized(early.plan, ctx, await runHooks(early.plan, ctx, options));
}

/**
 * The hooks' results for `raw`, to pass to `validateWith` later (an empty map when `raw` does not get
 * past `type`: `validateWith` refuses it at the same phase). What a use case gathers before its commit
 * attempt, so no attempt waits on a hook.
 */
export async function gatherHooks(
  raw: unknown,
  ctx: ValidationContext,
  options: HookRunOptions = {},
): Promise<HookResults> {
  const early = typed(raw, ctx);
  return early.ok ? runHooks(early.plan, ctx, options) : new Map();
}

/**
 * `validate` with hook results gathered before (`gatherHooks`): pure and synchronous. A step with no
 * results for its exact bytes is unverified, never passed.
 */
export function validateWith(raw: unknown, ctx: ValidationContext, hooks: HookResults): ValidationResult {
  const early = typed(raw, ctx);
  if (!early.ok) return early;
  return authorized(early.plan, ctx, hooks);
}
