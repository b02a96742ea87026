/**
 * applyEdit: an edit is a new, untrusted plan. Its base version must still be current and the editor
 * may edit at all; the candidate goes through the whole pipeline plus may_author. It becomes version
 * n+1, whose new steps get ids the run never used; approvals stay bound to step ids and digests, so
 * touched steps need approving again and untouched ones keep theirs.
 *
 * applyDiffAction: the diff message's partial keeps — remove a step the edit added, revert a step it
 * changed, discard the whole edit — each an edit of the version the message shows, behind the same gate.
 */
import {
  assignEditStepIds,
  diffPlans,
  type EditedStep,
  envelopeOf,
  type JsonObject,
  type PlanDiff,
  type PlanEnvelope,
  type Provenance,
  type ValidatedPlan,
  type ValidatedStep,
  type ValidationResult,
  validateWith,
} from '../../pipeline/index.ts';
import { editRights, type RunState } from '../guard.ts';
import { releasedStepProblem, releaseReady } from '../releases.ts';
import type { RunSnapshot } from '../store.ts';
import type { StoredVersion } from '../types.ts';
import { type Attempt, commitFor, gate, hooksOf, refuse, type UseCaseContext, viewOf } from './context.ts';

export interface EditInput {
  readonly runId: string;
  readonly baseVersion: number;
  readonly editorId: string;
  readonly steps: readonly EditedStep[];
}

export function applyEdit(ctx: UseCaseContext, snapshot: RunSnapshot, input: EditInput): Attempt {
  const click = { runId: input.runId, version: input.baseVersion, userId: input.editorId };
  const gated = gate(ctx, snapshot, click, 'edit');
  if (!('open' in gated)) return gated;
  const state = gated.open;
  const rights = editRights(ctx.config, state, input.editorId);
  if (!rights.ok) {
    return refuse(ctx, snapshot, state, {
      action: 'edit',
      ...click,
      reason: 'unauthorized',
      detail: rights.reason,
    });
  }
  const base = state.current.plan;
  // Hooks ran before the attempt for this candidate (the touched steps only): hook-gathering.ts.
  const validated = validateWith(
    editCandidate(state.current, input.steps),
    { config: ctx.config.pipeline, now: ctx.now, edit: { editorId: input.editorId, base } },
    hooksOf(ctx),
  );
  if (!validated.ok) return editRefused(ctx, snapshot, input, base, validated);
  const diff = diffPlans(base, validated.plan);
  if (diff.isEmpty && base.digest === validated.plan.digest) {
    return { result: { kind: 'unchanged', run: viewOf(ctx, input.runId, state) } };
  }
  // A released step may be running: the edit may move it, never change or remove it.
  const releasedProblem = releasedStepProblem(state.fields.released, validated.plan.steps);
  if (releasedProblem !== undefined) {
    return editRefused(ctx, snapshot, input, base, {
      ok: false,
      phase: 'authorize',
      diagnostics: [
        {
          phase: 'authorize',
          code: 'immutable_field',
          stepId: releasedProblem.stepId,
          message: releasedProblem.message,
        },
      ],
    });
  }
  const version = nextVersion(ctx, state, input.editorId, validated.plan, diff);
  const commit = commitFor(ctx, snapshot, input.runId)
    .set(ctx.keys.forRun(input.runId).version(version.version), JSON.stringify(version))
    .run({ version: version.version, plan_digest: version.plan.digest, recheck_problem: '' })
    .journal(
      {
        type: 'edited',
        editor: input.editorId,
        baseVersion: state.current.version,
        version: version.version,
        before: base,
        after: version.plan,
        diff,
      },
      ctx.now,
      version.plan.digest,
    );
  // The new version may make a step ready (a `continue` step added, or one whose approvals carry over).
  // Its answer shows the run as stored: the recheck problem of the version before is cleared above.
  const { recheckProblem: _cleared, ...fields } = state.fields;
  const next = releaseReady(ctx, commit, {
    ...state,
    current: version,
    fields: { ...fields, version: version.version },
  }).state;
  return {
    commit,
    result: { kind: 'edited', run: viewOf(ctx, input.runId, next), previous: state.current, diff },
  };
}

/** The pipeline refused the candidate: journaled (who tried what, and why); the plan is unchanged. */
function editRefused(
  ctx: UseCaseContext,
  snapshot: RunSnapshot,
  input: EditInput,
  base: ValidatedPlan,
  validated: Extract<ValidationResult, { ok: false }>,
): Attempt {
  const reason = `${validated.phase}: ${validated.diagnostics.map((d) => d.message).join('; ')}`;
  const commit = commitFor(ctx, snapshot, input.runId).journal(
    {
      type: 'edit_refused',
      editor: input.editorId,
      baseVersion: input.baseVersion,
      reason: reason.slice(0, 2000),
    },
    ctx.now,
    base.digest,
  );
  return { commit, result: { kind: 'invalid', phase: validated.phase, diagnostics: validated.diagnostics } };
}

/**
 * Version n+1: steps the edit added or changed are authored by the editor in this version, the others
 * keep their provenance; every id the run has used stays in its history.
 */
function nextVersion(
  ctx: UseCaseContext,
  state: RunState,
  editorId: string,
  plan: ValidatedPlan,
  diff: PlanDiff<ValidatedStep>,
): StoredVersion {
  const versionNumber = state.current.version + 1;
  const touched = new Map(
    diff.changes.flatMap((change) =>
      change.kind === 'added' || change.kind === 'changed' ? [[change.stepId, change.kind] as const] : [],
    ),
  );
  const provenance: Record<string, Provenance> = Object.fromEntries(
    plan.steps.map((step) => {
      const change = touched.get(step.id);
      return [
        step.id,
        change === undefined
          ? (state.current.provenance[step.id] ?? ({ by: 'agent', version: 1 } satisfies Provenance))
          : ({ by: 'user', userId: editorId, version: versionNumber, change } satisfies Provenance),
      ];
    }),
  );
  const stepHistory = { ...(state.current.stepHistory ?? {}) };
  for (const step of plan.steps) stepHistory[step.id] = step.digest;
  return {
    version: versionNumber,
    plan,
    provenance,
    createdBy: editorId,
    createdAt: ctx.now,
    baseVersion: state.current.version,
    stepHistory,
  };
}

/** The candidate plan of an edit of `base`: the base envelope with the edited steps, ids assigned. */
export function editCandidate(base: StoredVersion, steps: readonly EditedStep[]): PlanEnvelope {
  const baseIds = new Set(base.plan.steps.map((step) => step.id));
  return {
    ...envelopeOf(base.plan),
    steps: assignEditStepIds(baseIds, base.stepHistory ?? {}, steps),
  };
}

/** A diff message's partial keep. */
export type DiffAction = 'remove_step' | 'revert_step' | 'discard_edit';

export interface DiffActionInput {
  readonly runId: string;
  /** The version the diff message shows (an edit). */
  readonly version: number;
  readonly userId: string;
  readonly action: DiffAction;
  readonly stepId?: string;
}

/**
 * A diff action, given the version the message shows and the one it was derived from (read by the
 * caller: versions are immutable). The click goes through the gate like any other — decided, expired
 * and stale are answered first — then becomes an edit of that version.
 */
export function applyDiffAction(
  ctx: UseCaseContext,
  snapshot: RunSnapshot,
  input: DiffActionInput,
  versions: { readonly edited?: StoredVersion; readonly base?: StoredVersion },
): Attempt {
  const gated = gate(ctx, snapshot, input, 'edit');
  if (!('open' in gated)) return gated;
  const refusal = (detail: string) =>
    refuse(ctx, snapshot, gated.open, {
      action: 'edit',
      version: input.version,
      userId: input.userId,
      reason: 'unauthorized',
      detail,
    });
  const { edited, base } = versions;
  if (edited === undefined || base === undefined) {
    return refusal(`version ${input.version} is not an edit, so there is nothing to undo`);
  }
  const steps = diffActionSteps(edited, base, input.action, input.stepId);
  if (!steps.ok) return refusal(steps.reason);
  return applyEdit(ctx, snapshot, {
    runId: input.runId,
    baseVersion: input.version,
    editorId: input.userId,
    steps: steps.steps,
  });
}

/** The steps of the edit a diff action asks for, or why there is none. */
export function diffActionSteps(
  edited: StoredVersion,
  base: StoredVersion,
  action: DiffAction,
  stepId: string | undefined,
): { readonly ok: true; readonly steps: EditedStep[] } | { readonly ok: false; readonly reason: string } {
  const plain = (
    steps: readonly { id: string; tool: string; args: JsonObject; dependsOn?: readonly string[] }[],
  ) =>
    steps.map(({ id, tool, args, dependsOn }) => ({
      id,
      tool,
      args,
      ...(dependsOn === undefined ? {} : { dependsOn }),
    }));
  switch (action) {
    case 'discard_edit':
      return { ok: true, steps: plain(base.plan.steps) };
    case 'remove_step':
      return { ok: true, steps: plain(edited.plan.steps.filter((step) => step.id !== stepId)) };
    case 'revert_step': {
      const original = base.plan.steps.find((step) => step.id === stepId);
      if (original === undefined)
        return { ok: false, reason: `step ${stepId} did not exist before this edit` };
      return {
        ok: true,
        steps: plain(edited.plan.steps.map((step) => (step.id === stepId ? original : step))),
      };
    }
  }
}
