/**
 * Running the tools' `checks`, `annotate` and `preview` hooks (docs/tool-hooks.md): all of them, for
 * every step, in parallel, each within its time budget. This is the one place hooks are awaited; the
 * results are plain values `authorize` reads (it stays pure and synchronous). A hook that throws,
 * rejects, answers something malformed or runs out of time becomes an `Unverified` entry, never an
 * exception and never a pass.
 */
import type { ChangeSet, Unverified } from './change-set.ts';
import { checkChangeSet } from './change-set-schema.ts';
import type { HookTimer, ValidationContext } from './context.ts';
import { digestPlan } from './digest.ts';
import type { Annotation, PlanEnvelope, Step, ValidatedPlan } from './plan.ts';
import type { CheckProblem, ToolDefinition, ToolHookContext } from './tool.ts';

/** The hooks that may be async and that can leave a step unverified. */
export type HookName = Unverified['hook'];

export const HOOK_NAMES: readonly HookName[] = Object.freeze(['checks', 'annotate', 'preview']);

/** The default time budget of each hook call (`defaults.hookTimeout`). */
export const DEFAULT_HOOK_TIMEOUT_MS = 2_000;

/** What one step's hooks answered, for the step's bytes at `digest`. */
export interface StepHookResults {
  /** The step digest the hooks ran for: results for other bytes are never used. */
  readonly digest: string;
  /** From `checks`: each one rejects the plan at authorize. */
  readonly problems: readonly CheckProblem[];
  readonly annotations: readonly Annotation[];
  readonly changeSet?: ChangeSet;
  readonly unverified: readonly Unverified[];
}

/** Hook results per step id. */
export type HookResults = ReadonlyMap<string, StepHookResults>;

/** The real timer: `setTimeout`, cleared when the hook finishes first. */
export const realTimer: HookTimer = (ms, signal) =>
  new Promise((resolve) => {
    if (signal.aborted) return;
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => clearTimeout(timer), { once: true });
  });

/** What `runHooks` reads besides the plan. */
export interface HookRunOptions {
  /**
   * Results kept from a stored version: a step found here with the same id and digest keeps them and
   * its hooks are not run again — except those named in `rerun`.
   */
  readonly reuse?: HookResults;
  /** Hooks run again even for reused steps (at approval: `['checks']`). */
  readonly rerun?: readonly HookName[];
}

const NONE: readonly never[] = Object.freeze([]);

/**
 * Runs the hooks of every step of a typed plan (every tool exists, every argument matches its schema),
 * in parallel, each call within `ctx.config.hookTimeoutMs` on `ctx.timer`.
 * @example const hooks = await runHooks(typedPlan, { config, now }); authorize(typedPlan, ctx, hooks);
 */
export async function runHooks(
  plan: PlanEnvelope,
  ctx: ValidationContext,
  options: HookRunOptions = {},
): Promise<HookResults> {
  const digests = digestPlan(plan).steps;
  const entries = await Promise.all(
    plan.steps.map(async (step, index): Promise<[string, StepHookResults]> => {
      const digest = digests[index] as string;
      const tool = ctx.config.tools.get(step.tool);
      const kept = options.reuse?.get(step.id);
      const reused = kept !== undefined && kept.digest === digest ? kept : undefined;
      if (tool === undefined)
        return [step.id, { digest, problems: NONE, annotations: NONE, unverified: NONE }];
      const run = (hook: HookName) => reused === undefined || (options.rerun ?? NONE).includes(hook);
      return [step.id, await runStepHooks(tool, step, plan, ctx, digest, run, reused)];
    }),
  );
  return new Map(entries);
}

/** A validated plan's stored results, to reuse: what its steps carry, with no check problems. */
export function storedHookResults(plan: ValidatedPlan): HookResults {
  return new Map(
    plan.steps.map((step) => [
      step.id,
      {
        digest: step.digest,
        problems: NONE,
        annotations: step.annotations,
        ...(step.changeSet === undefined ? {} : { changeSet: step.changeSet }),
        unverified: step.unverified ?? NONE,
      },
    ]),
  );
}

async function runStepHooks(
  tool: ToolDefinition,
  step: Step,
  plan: PlanEnvelope,
  ctx: ValidationContext,
  digest: string,
  run: (hook: HookName) => boolean,
  reused: StepHookResults | undefined,
): Promise<StepHookResults> {
  const budgetMs = ctx.config.hookTimeoutMs ?? DEFAULT_HOOK_TIMEOUT_MS;
  const timer = ctx.timer ?? realTimer;
  const call = <T>(hook: HookName, body: (hookContext: ToolHookContext) => T | Promise<T>) =>
    withBudget(hook, budgetMs, timer, (signal) => body({ stepId: step.id, plan, now: ctx.now, signal }));

  const [checks, annotate, preview] = await Promise.all([
    tool.checks === undefined || !run('checks')
      ? undefined
      : call('checks', (hookContext) => tool.checks?.(step.args, hookContext)),
    tool.annotate === undefined || !run('annotate')
      ? undefined
      : call('annotate', (hookContext) => tool.annotate?.(step.args, hookContext)),
    tool.preview === undefined || !run('preview')
      ? undefined
      : call('preview', (hookContext) => tool.preview?.(step.args, hookContext)),
  ]);
  return settleHooks(digest, { checks, annotate, preview }, reused);
}

/** What one hook call came to: its answer (not checked yet), or why there is none. */
export type HookOutcome =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly reason: string };

/**
 * One step's results from its hooks' outcomes: answers checked (a malformed one is unverified, in
 * plain words); a hook that did not run (absent) keeps what `reused` has. Pure.
 */
export function settleHooks(
  digest: string,
  outcomes: { readonly [H in HookName]?: HookOutcome | undefined },
  reused?: StepHookResults,
): StepHookResults {
  const { checks, annotate, preview } = outcomes;
  const kept = (hook: HookName) => (reused?.unverified ?? NONE).filter((entry) => entry.hook === hook);
  const unverified: Unverified[] = [];
  let problems: readonly CheckProblem[] = NONE;
  if (checks === undefined) unverified.push(...kept('checks'));
  else if (!checks.ok) unverified.push({ hook: 'checks', reason: checks.reason });
  else {
    const read = readProblems(checks.value);
    if (read.ok) problems = read.problems;
    else unverified.push({ hook: 'checks', reason: `checks answered ${read.reason}` });
  }

  let annotations: readonly Annotation[] = reused?.annotations ?? NONE;
  if (annotate === undefined) unverified.push(...kept('annotate'));
  else if (!annotate.ok) {
    annotations = NONE;
    unverified.push({ hook: 'annotate', reason: annotate.reason });
  } else {
    const read = readAnnotations(annotate.value);
    annotations = read.ok ? read.annotations : NONE;
    if (!read.ok) unverified.push({ hook: 'annotate', reason: `annotate answered ${read.reason}` });
  }

  let changeSet = reused?.changeSet;
  if (preview === undefined) unverified.push(...kept('preview'));
  else {
    changeSet = undefined;
    if (!preview.ok) unverified.push({ hook: 'preview', reason: preview.reason });
    else {
      const checked = checkChangeSet(preview.value);
      if (checked.ok) changeSet = checked.changeSet;
      else
        unverified.push({
          hook: 'preview',
          reason: `preview answered a change set that is not well formed: ${checked.reason}`,
        });
    }
  }
  return {
    digest,
    problems,
    annotations,
    ...(changeSet === undefined ? {} : { changeSet }),
    unverified: unverified.length === 0 ? NONE : unverified.map(clip),
  };
}

/**
 * One hook call against its budget: the first of its answer and the timer wins. The hook's signal is
 * aborted when the budget runs out; the timer is released when the hook answers first.
 */
async function withBudget(
  hook: HookName,
  budgetMs: number,
  timer: HookTimer,
  body: (signal: AbortSignal) => unknown,
): Promise<HookOutcome> {
  const hookSignal = new AbortController();
  const timerSignal = new AbortController();
  const answered = (async (): Promise<HookOutcome> => {
    try {
      return { ok: true, value: await body(hookSignal.signal) };
    } catch (error) {
      return { ok: false, reason: `${hook} failed: ${messageOf(error)}` };
    }
  })();
  const expired = timer(budgetMs, timerSignal.signal).then((): HookOutcome => {
    hookSignal.abort(new Error(`${hook} timed out after ${spokenDuration(budgetMs)}`));
    return { ok: false, reason: `${hook} timed out after ${spokenDuration(budgetMs)}` };
  });
  try {
    return await Promise.race([answered, expired]);
  } finally {
    timerSignal.abort();
  }
}

function readProblems(
  value: unknown,
): { ok: true; problems: readonly CheckProblem[] } | { ok: false; reason: string } {
  if (!Array.isArray(value)) return { ok: false, reason: `${kindOf(value)}, not a list of problems` };
  for (const problem of value) {
    if (typeof problem === 'string') continue;
    if (typeof problem === 'object' && problem !== null && typeof problem.message === 'string') continue;
    return { ok: false, reason: `a problem that is ${kindOf(problem)}, not a message` };
  }
  return { ok: true, problems: value as CheckProblem[] };
}

function readAnnotations(
  value: unknown,
): { ok: true; annotations: readonly Annotation[] } | { ok: false; reason: string } {
  if (!Array.isArray(value)) return { ok: false, reason: `${kindOf(value)}, not a list of notes` };
  if (value.length === 0) return { ok: true, annotations: NONE };
  const annotations: Annotation[] = [];
  for (const note of value) {
    if (typeof note === 'string') annotations.push({ level: 'warning', message: note });
    else if (
      typeof note === 'object' &&
      note !== null &&
      (note.level === 'info' || note.level === 'warning') &&
      typeof note.message === 'string'
    ) {
      annotations.push({ level: note.level, message: note.message });
    } else return { ok: false, reason: `a note that is ${kindOf(note)}, not text or { level, message }` };
  }
  return { ok: true, annotations };
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** "2 s", "1.5 s", "250 ms": a budget as a person reads it. */
export function spokenDuration(ms: number): string {
  if (ms < 1_000) return `${ms} ms`;
  const seconds = Math.round(ms / 100) / 10;
  return `${seconds} s`;
}

function messageOf(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text === '' ? 'no reason given' : text;
}

const MAX_REASON = 500;

function clip(entry: Unverified): Unverified {
  return entry.reason.length <= MAX_REASON
    ? entry
    : { ...entry, reason: `${entry.reason.slice(0, MAX_REASON - 1)}…` };
}
