import { groupsOf, mayAuthor, type ValidationContext } from '../context.ts';
import { type Diagnostic, diagnostic, failed, ok, type PhaseResult } from '../diagnostics.ts';
import { diffPlans } from '../diff.ts';
import { digestPlan } from '../digest.ts';
import type { Annotation, PlanEnvelope, Step, ValidatedPlan, ValidatedStep } from '../plan.ts';
import { routeStep } from '../policy.ts';
import type { ToolDefinition, ToolHookContext } from '../tool.ts';

/**
 * Phase 4: the gate. Routes each step by policy (tool and arguments), runs the tools' `checks`,
 * collects `annotate` notes, and for edits enforces may_author and the envelope's immutability. A
 * submission with `ifBlocked: 'refuse'` is refused here when policy blocks any step.
 * Runs after `type`, so every tool exists and every step's arguments match its schema.
 */
export function authorize(plan: PlanEnvelope, ctx: ValidationContext): PhaseResult<ValidatedPlan> {
  const diagnostics: Diagnostic[] = [...checkExpiry(plan, ctx)];
  if (ctx.edit !== undefined) diagnostics.push(...checkEdit(plan, ctx.edit.base, ctx.edit.editorId, ctx));

  const digests = digestPlan(plan);
  const steps: ValidatedStep[] = [];
  for (const [index, step] of plan.steps.entries()) {
    const tool = ctx.config.tools.get(step.tool) as ToolDefinition;
    const hookContext: ToolHookContext = { stepId: step.id, plan, now: ctx.now };
    const routed = routeStep(step, plan, ctx.config.policy);
    if (!routed.ok) {
      diagnostics.push(diagnostic('authorize', 'check_failed', routed.message, { stepId: step.id }));
      continue;
    }
    if (plan.ifBlocked === 'refuse' && routed.route.kind === 'block') {
      diagnostics.push(
        diagnostic('authorize', 'blocked', `step ${step.id}: ${routed.route.reason}`, { stepId: step.id }),
      );
    }
    diagnostics.push(...runChecks(tool, step, hookContext));
    const summary = runSummarize(tool, step, hookContext);
    // Built field by field: object spread here measured ~3 µs per step (V8's slow clone path).
    const validated: { -readonly [K in keyof ValidatedStep]: ValidatedStep[K] } = {
      id: step.id,
      tool: step.tool,
      args: step.args,
      digest: digests.steps[index] as string,
      route: routed.route,
      annotations: runAnnotate(tool, step, hookContext),
    };
    if (summary !== undefined) validated.summary = summary;
    if (step.dependsOn !== undefined) validated.dependsOn = step.dependsOn;
    steps.push(validated);
  }
  if (ctx.edit !== undefined) diagnostics.push(...checkApprovable(steps, plan, ctx.edit, ctx));
  if (diagnostics.length > 0) return failed(diagnostics);
  const validatedPlan: { -readonly [K in keyof ValidatedPlan]: ValidatedPlan[K] } = {
    runId: plan.runId,
    agent: plan.agent,
    expiresAt: plan.expiresAt,
    steps,
    digest: digests.plan,
  };
  if (plan.summary !== undefined) validatedPlan.summary = plan.summary;
  if (plan.context !== undefined) validatedPlan.context = plan.context;
  return ok(freezePlan(validatedPlan));
}

function checkExpiry(plan: PlanEnvelope, ctx: ValidationContext): Diagnostic[] {
  const expiresAt = Date.parse(plan.expiresAt);
  if (expiresAt <= ctx.now) {
    return [
      diagnostic(
        'authorize',
        'expiry_out_of_bounds',
        `the plan expired at ${plan.expiresAt}, before it was checked`,
        {
          path: ['expiresAt'],
        },
      ),
    ];
  }
  // An edit keeps its base's expiry (checked below), so only new submissions are bounded above.
  if (ctx.edit === undefined && expiresAt > ctx.now + ctx.config.maxExpiresInMs) {
    const hours = Math.round(ctx.config.maxExpiresInMs / 3_600_000);
    return [
      diagnostic(
        'authorize',
        'expiry_out_of_bounds',
        `expiresAt ${plan.expiresAt} is too far ahead: plans may stay open at most ${hours}h`,
        { path: ['expiresAt'] },
      ),
    ];
  }
  return [];
}

/** An edit may change steps only, and only steps whose tools the editor may author. */
function checkEdit(
  plan: PlanEnvelope,
  base: PlanEnvelope,
  editorId: string,
  ctx: ValidationContext,
): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  for (const field of ['runId', 'agent', 'expiresAt'] as const) {
    if (plan[field] !== base[field]) {
      diagnostics.push(
        diagnostic(
          'authorize',
          'immutable_field',
          `an edit cannot change ${field} (it is part of the protected plan)`,
          {
            path: [field],
          },
        ),
      );
    }
  }
  const touched = new Set(diffPlans(base, plan).touchedStepIds);
  const editorGroups = groupsOf(ctx.config, editorId);
  for (const step of plan.steps) {
    if (!touched.has(step.id) || mayAuthor(ctx.config, editorId, step.tool)) continue;
    const who =
      editorGroups.length > 0
        ? `your groups (${editorGroups.join(', ')}) may not write`
        : 'you are in no group that may write';
    diagnostics.push(
      diagnostic(
        'authorize',
        'may_author',
        `step ${step.id}: ${who} ${step.tool} steps; approving one and writing one are separate rights`,
        { stepId: step.id },
      ),
    );
  }
  return diagnostics;
}

/**
 * A step the editor writes becomes theirs; where policy bars authors from approving their own steps,
 * enough other people must remain in the group, or the edit would leave a step nobody can approve.
 */
function checkApprovable(
  steps: readonly ValidatedStep[],
  plan: PlanEnvelope,
  edit: NonNullable<ValidationContext['edit']>,
  ctx: ValidationContext,
): Diagnostic[] {
  const touched = new Set(diffPlans(edit.base, plan).touchedStepIds);
  return steps.flatMap((step) => {
    const { route } = step;
    if (!touched.has(step.id) || route.kind !== 'review' || !route.distinctFromAuthor) return [];
    const others = (ctx.config.groups[route.group] ?? []).filter((member) => member !== edit.editorId);
    if (others.length >= route.approvals) return [];
    return [
      diagnostic(
        'authorize',
        'unapprovable',
        `step ${step.id}: needs ${route.approvals} ${route.group} approvals from people other than its author, but ${route.group} has only ${others.length} other member(s); ask one of them to make this edit`,
        { stepId: step.id },
      ),
    ];
  });
}

function runChecks(tool: ToolDefinition, step: Step, hookContext: ToolHookContext): Diagnostic[] {
  if (tool.checks === undefined) return [];
  try {
    return tool.checks(step.args, hookContext).map((problem) =>
      typeof problem === 'string'
        ? diagnostic('authorize', 'check_failed', `step ${step.id}: ${problem}`, { stepId: step.id })
        : diagnostic('authorize', 'check_failed', `step ${step.id}: ${problem.message}`, {
            stepId: step.id,
            path: problem.path,
          }),
    );
  } catch (error) {
    // A throwing check is a bug in the tool's config; fail closed and say so.
    return [
      diagnostic(
        'authorize',
        'check_failed',
        `step ${step.id}: the ${tool.name} check could not run: ${message(error)}`,
        {
          stepId: step.id,
        },
      ),
    ];
  }
}

const NO_ANNOTATIONS: readonly Annotation[] = Object.freeze([]);

function runAnnotate(tool: ToolDefinition, step: Step, hookContext: ToolHookContext): readonly Annotation[] {
  if (tool.annotate === undefined) return NO_ANNOTATIONS;
  try {
    const notes = tool.annotate(step.args, hookContext);
    if (notes.length === 0) return NO_ANNOTATIONS;
    return notes.map(
      (note): Annotation => (typeof note === 'string' ? { level: 'warning', message: note } : note),
    );
  } catch (error) {
    return [
      { level: 'warning', message: `the ${tool.name} annotations could not be computed: ${message(error)}` },
    ];
  }
}

function runSummarize(tool: ToolDefinition, step: Step, hookContext: ToolHookContext): string | undefined {
  if (tool.summarize === undefined) return undefined;
  try {
    return tool.summarize(step.args, hookContext);
  } catch {
    return undefined;
  }
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Deep-freezes a validated plan. The objects built here are frozen shallowly and only the parts that
 * came from input are walked (routes and empty annotation lists are shared and already frozen).
 */
function freezePlan(plan: ValidatedPlan): ValidatedPlan {
  for (const step of plan.steps) {
    deepFreeze(step.args);
    if (step.annotations.length > 0) deepFreeze(step.annotations);
    Object.freeze(step);
  }
  Object.freeze(plan.steps);
  if (plan.context !== undefined) deepFreeze(plan.context);
  return Object.freeze(plan);
}

/** Freezes a plain JSON-like tree in place and returns it. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key in value) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}
