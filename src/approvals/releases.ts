/**
 * Early release (docs/architecture.md §7): which steps of a pending run may run before the whole plan
 * is decided, and the writes that release them. A step is released when its route is `continue`, its
 * own approvals are complete (or it is `auto`), and every step it depends on was reported `applied`.
 * Pure: the use cases (and the outcome report) call `releaseReady` inside the commit that can make a
 * step ready, so a release is atomic with the approval, submission, edit or outcome that caused it.
 */
import type { CountersignConfig } from '../config/config-types.ts';
import {
  envelopeOf,
  type HookResults,
  type Release,
  type ReleasedStep,
  type UnsignedRelease,
  unmetDependencies,
  type ValidatedStep,
  validateWith,
} from '../pipeline/index.ts';
import { decisionPlanOf } from './decision-builder.ts';
import type { Keys } from './keys.ts';
import { standingOf } from './rules.ts';
import type { RunCommit } from './run-commit.ts';
import { appliedOf, authorityOf, type RunStateInput } from './run-view.ts';
import type { ReleasedEntry } from './store.ts';
import type { StoredVersion } from './types.ts';

/** Signs a release with Countersign's key (the same receipt scheme as decisions). */
export type ReleaseSigner = (unsigned: UnsignedRelease) => Release;

/** What releasing reads besides the run. */
export interface ReleaseContext {
  readonly config: CountersignConfig;
  readonly keys: Keys;
  /** Redis's time of the transition (ms). */
  readonly now: number;
  readonly signRelease: ReleaseSigner;
  /** Hook results for the current version (`checks` run again), gathered before the attempt. */
  readonly hooks?: HookResults | undefined;
}

const NO_HOOKS: HookResults = new Map();

/**
 * The steps of `version` released now, in plan order: `continue`, not released yet, own approvals
 * complete (or `auto`), every dependency applied. Only for a pending run; blocked steps never.
 */
export function releasableSteps(
  version: StoredVersion,
  state: Pick<RunStateInput, 'approvals' | 'outcomes'> & {
    readonly released: Readonly<Record<string, unknown>>;
  },
  standing: ReturnType<typeof standingOf>,
): ValidatedStep[] {
  const applied = appliedOf(state.outcomes);
  return version.plan.steps.filter(
    (step) =>
      step.route.kind !== 'block' &&
      step.route.continue === true &&
      state.released[step.id] === undefined &&
      (step.route.kind === 'auto' || standing[step.id]?.satisfied === true) &&
      unmetDependencies(step, applied).length === 0,
  );
}

/**
 * Releases every step of a pending run that is ready, into `commit`: each signed release into the
 * run's `releases` hash, the run hash's `released` map, a `released` journal record per step, and one
 * message on the agent's released channel. Routes and checks are re-run against today's config first
 * (as an approval that completes a plan does): a step whose rule no longer says `continue` waits, and
 * a plan whose checks now fail releases nothing. Returns the state with the releases, and their ids.
 */
export function releaseReady<S extends RunStateInput & { readonly runId: string }>(
  ctx: ReleaseContext,
  commit: RunCommit,
  state: S,
): { readonly state: S; readonly releasedNow: readonly string[] } {
  const { fields, current } = state;
  const unchanged = { state, releasedNow: [] };
  if (fields.status !== 'pending' || ctx.now >= fields.expiresAt) return unchanged;
  const released = fields.released ?? {};
  const authority = authorityOf(ctx.config, fields);
  if (
    releasableSteps(current, { ...state, released }, standingOf(current, state.approvals, authority))
      .length === 0
  )
    return unchanged;
  const recheck = validateWith(
    envelopeOf(current.plan),
    { config: ctx.config.pipeline, now: ctx.now },
    ctx.hooks ?? NO_HOOKS,
  );
  if (!recheck.ok) return unchanged;
  const rechecked: StoredVersion = { ...current, plan: recheck.plan };
  const ready = releasableSteps(
    rechecked,
    { ...state, released },
    standingOf(rechecked, state.approvals, authority),
  );
  if (ready.length === 0) return unchanged;

  const keys = ctx.keys.forRun(state.runId);
  const plan = decisionPlanOf(current, state.approvals, authority);
  const releasedAt = new Date(ctx.now).toISOString();
  const next: Record<string, ReleasedEntry> = { ...released };
  for (const step of ready) {
    const release = ctx.signRelease({
      kind: 'release',
      runId: state.runId,
      agent: fields.agent,
      version: current.version,
      plan,
      stepId: step.id,
      releasedAt,
      configDigest: ctx.config.digest,
    });
    next[step.id] = { at: ctx.now, version: current.version, digest: step.digest };
    commit
      .hset(keys.releases, { [step.id]: JSON.stringify(release) })
      .journal(
        { type: 'released', stepId: step.id, version: current.version, digest: step.digest },
        ctx.now,
        current.plan.digest,
      );
  }
  commit.run({ released: next }).publish(ctx.keys.releasedChannel(fields.agent), state.runId);
  return {
    state: { ...state, fields: { ...fields, released: next } },
    releasedNow: ready.map((step) => step.id),
  };
}

/**
 * What a final decision lists of the steps released before it, in plan order: when each was released
 * and the agent's last report on it (`null` when none).
 */
export function releasedSteps(state: RunStateInput): ReleasedStep[] {
  const released = state.fields.released ?? {};
  const order = new Map(state.current.plan.steps.map((step, index) => [step.id, index]));
  return Object.entries(released)
    .sort(
      ([a, x], [b, y]) =>
        (order.get(a) ?? Number.MAX_SAFE_INTEGER) - (order.get(b) ?? Number.MAX_SAFE_INTEGER) || x.at - y.at,
    )
    .map(([stepId, entry]) => {
      const outcome = state.outcomes?.[stepId]?.status;
      return {
        stepId,
        releasedAt: new Date(entry.at).toISOString(),
        outcome: outcome === 'applying' || outcome === 'applied' || outcome === 'failed' ? outcome : null,
      };
    });
}

/**
 * Why an edit may not become the next version: it changes or removes a step already released to the
 * agent (which may be running it). Undefined when every released step is kept as released.
 */
export function releasedStepProblem(
  released: Readonly<Record<string, ReleasedEntry>> | undefined,
  steps: readonly { readonly id: string; readonly digest: string }[],
): { readonly stepId: string; readonly message: string } | undefined {
  for (const [stepId, entry] of Object.entries(released ?? {})) {
    const kept = steps.find((step) => step.id === stepId);
    if (kept === undefined) {
      return {
        stepId,
        message: `${stepId} was already released to the agent and may be running: it cannot be removed`,
      };
    }
    if (kept.digest !== entry.digest) {
      return {
        stepId,
        message: `${stepId} was already released to the agent and may be running: it cannot be changed`,
      };
    }
  }
  return undefined;
}
