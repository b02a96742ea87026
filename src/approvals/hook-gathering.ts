/**
 * The tools' hooks, gathered before a command's commit attempts (docs/architecture.md §5, "Hooks and
 * the commit loop"). Hooks may read other systems and take up to their time budget; an attempt is a
 * read → decide → compare-and-set that must stay short and may be repeated, so a command runs the hooks
 * once, for the plan it expects to decide on, and every attempt's pure re-check reads the results. An
 * attempt that finds a different plan (a race lost to an edit) gets no results for its steps' bytes:
 * those steps count as unverified, never as passed — and such an attempt is refused as stale anyway.
 *
 * - a submission runs every hook of every step;
 * - an edit runs the hooks of the steps it touched (added, or changed bytes — dependencies included),
 *   and `checks` of every other step again (an edited plan goes through the whole pipeline, and the
 *   release its commit may make must not pass a check that fails now); the others keep the change
 *   set, notes and unverified marks their version stored;
 * - an approval (and an `applied` report that can release a step) runs `checks` again; the stored
 *   change set is kept, as the approvers saw it (the executor's precondition check catches a world
 *   that moved since).
 */
import type { CountersignConfig } from '../config/config-types.ts';
import {
  type EditedStep,
  envelopeOf,
  gatherHooks,
  type HookResults,
  type HookTimer,
  runHooks,
  storedHookResults,
  type ValidatedPlan,
} from '../pipeline/index.ts';
import type { RunState } from './guard.ts';
import type { StoredVersion } from './types.ts';
import { type DiffActionInput, diffActionSteps, type EditInput, editCandidate } from './use-cases/edit.ts';

/** What gathering reads: the config, the time the hooks see, and the timer their budgets run on. */
export interface HookGathering {
  readonly config: CountersignConfig;
  readonly now: number;
  readonly timer?: HookTimer;
}

function context(gathering: HookGathering) {
  return {
    config: gathering.config.pipeline,
    now: gathering.now,
    ...(gathering.timer === undefined ? {} : { timer: gathering.timer }),
  };
}

/** Every hook of every step of a submission. */
export function submissionHooks(gathering: HookGathering, raw: string): Promise<HookResults> {
  return gatherHooks(raw, context(gathering));
}

/** `checks` again for a stored plan; its change sets, notes and other unverified marks as stored. */
export function recheckHooks(gathering: HookGathering, plan: ValidatedPlan): Promise<HookResults> {
  return runHooks(envelopeOf(plan), context(gathering), {
    reuse: storedHookResults(plan),
    rerun: ['checks'],
  });
}

/**
 * The hooks of the steps an edit of `base` touched, and every step's `checks`; untouched steps keep
 * the change set and notes `base` stored.
 */
export function editHooks(
  gathering: HookGathering,
  base: StoredVersion,
  edit: { readonly editorId: string; readonly steps: readonly EditedStep[] },
): Promise<HookResults> {
  return gatherHooks(
    editCandidate(base, edit.steps),
    { ...context(gathering), edit: { editorId: edit.editorId, base: base.plan } },
    { reuse: storedHookResults(base.plan), rerun: ['checks'] },
  );
}

/** Whether a pending run has a `continue` step not released yet, which an `applied` report may release. */
function releaseWaiting(state: RunState | undefined): state is RunState {
  if (state === undefined || state.fields.status !== 'pending') return false;
  const released = state.fields.released ?? {};
  return state.current.plan.steps.some(
    (step) => step.route.kind !== 'block' && step.route.continue === true && released[step.id] === undefined,
  );
}

/** What a command's hooks read before its attempts. */
export interface HookReads {
  readonly config: CountersignConfig;
  readonly timer?: HookTimer;
  /** The time transitions decide at (the hooks see it as `now`). */
  now(): Promise<number>;
  getVersion(runId: string, version: number): Promise<StoredVersion | undefined>;
  runState(runId: string): Promise<RunState | undefined>;
}

/** Each command's hooks, gathered before its attempts (undefined: nothing to gather, or no such version). */
export class CommandHooks {
  constructor(private readonly reads: HookReads) {}

  private async gathering(): Promise<HookGathering> {
    const { config, timer } = this.reads;
    return { config, now: await this.reads.now(), ...(timer === undefined ? {} : { timer }) };
  }

  async submission(raw: string): Promise<HookResults> {
    return submissionHooks(await this.gathering(), raw);
  }

  /** The checks again on the version approved (a stale one is refused by the attempt anyway). */
  async approval(input: {
    readonly runId: string;
    readonly version: number;
  }): Promise<HookResults | undefined> {
    const version = await this.reads.getVersion(input.runId, input.version);
    return version === undefined ? undefined : this.recheck(version.plan);
  }

  /** `recheckHooks`, without reading the time when no step's tool has `checks` (nothing to run). */
  private async recheck(plan: ValidatedPlan): Promise<HookResults> {
    const { tools } = this.reads.config.pipeline;
    if (!plan.steps.some((step) => tools.get(step.tool)?.checks !== undefined))
      return storedHookResults(plan);
    return recheckHooks(await this.gathering(), plan);
  }

  async edit(input: EditInput): Promise<HookResults | undefined> {
    const base = await this.reads.getVersion(input.runId, input.baseVersion);
    return base === undefined ? undefined : editHooks(await this.gathering(), base, input);
  }

  /** A diff action is an edit of the version its message shows. */
  async diffAction(
    input: DiffActionInput,
    versions: { readonly edited?: StoredVersion; readonly base?: StoredVersion },
  ): Promise<HookResults | undefined> {
    const { edited, base } = versions;
    if (edited === undefined || base === undefined) return undefined;
    const steps = diffActionSteps(edited, base, input.action, input.stepId);
    if (!steps.ok) return undefined;
    return editHooks(await this.gathering(), edited, { editorId: input.userId, steps: steps.steps });
  }

  /** Before an outcome report: what an `applied` one may release needs its checks run again. */
  async outcome(input: {
    readonly runId: string;
    readonly status: string;
  }): Promise<HookResults | undefined> {
    if (input.status !== 'applied') return undefined;
    const state = await this.reads.runState(input.runId);
    return releaseWaiting(state) ? this.recheck(state.current.plan) : undefined;
  }
}
