/**
 * `validate` for fixtures whose tools' hooks answer synchronously (the freight example's do): the same
 * phases and the same hook results as `await validate(...)`, for test helpers that build plans at once.
 * A hook that returns a promise is a fixture mistake: it throws, asking for `await validate`.
 */
import {
  envelopeOf,
  HOOK_NAMES,
  type HookOutcome,
  type HookResults,
  settleHooks,
  type ToolDefinition,
  type ValidationContext,
  type ValidationResult,
  validateWith,
} from '../../src/pipeline/index.ts';

const NEVER_ABORTED = new AbortController().signal;

export function validateNow(raw: unknown, ctx: ValidationContext): ValidationResult {
  // A first pass with no hook results gives the steps as typed (ids assigned, digests computed).
  const first = validateWith(raw, ctx, new Map());
  if (!first.ok) return first;
  const plan = envelopeOf(first.plan);
  const hooks: HookResults = new Map(
    first.plan.steps.map((step) => {
      const tool = ctx.config.tools.get(step.tool) as ToolDefinition;
      const outcomes: Partial<Record<(typeof HOOK_NAMES)[number], HookOutcome>> = {};
      for (const hook of HOOK_NAMES) {
        const call = tool[hook] as ((args: unknown, hookContext: unknown) => unknown) | undefined;
        if (call === undefined) continue;
        try {
          const value = call(step.args, { stepId: step.id, plan, now: ctx.now, signal: NEVER_ABORTED });
          if (value instanceof Promise) throw new Error(`${tool.name}.${hook} is async: use await validate`);
          outcomes[hook] = { ok: true, value };
        } catch (error) {
          if (error instanceof Error && error.message.endsWith('use await validate')) throw error;
          outcomes[hook] = {
            ok: false,
            reason: `${hook} failed: ${error instanceof Error ? error.message : String(error)}`,
          };
        }
      }
      return [step.id, settleHooks(step.digest, outcomes)];
    }),
  );
  return validateWith(raw, ctx, hooks);
}
