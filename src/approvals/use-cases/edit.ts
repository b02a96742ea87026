/**
 * applyEdit: an edit is a new, untrusted plan. Its base version must still be current and the editor
 * may edit at all; the candidate goes through the whole pipeline plus may_author. It becomes version
 * n+1, whose new steps get ids the run never used; approvals stay bound to step ids and digests, so
 * touched steps need approving again and untouched ones keep theirs.
 *
 * diffActionSteps: the diff message's partial keeps — remove a step the edit added, revert a step it
 * changed, discard the whole edit — as the steps of a new edit of the version shown.
 */
import {
  assignEditStepIds,
  diffPlans,
  type EditedStep,
  envelopeOf,
  type JsonObject,
  type Provenance,
  validate,
} from '../../pipeline/index.ts';
import { editRights } from '../guard.ts';
import type { RunSnapshot } from '../store.ts';
import type { StoredVersion } from '../types.ts';
import { type Attempt, commitFor, gate, refuse, type UseCaseContext, viewOf } from './context.ts';

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
  const history = { ...(state.current.stepHistory ?? {}) };
  const baseIds = new Set(base.steps.map((step) => step.id));
  const candidate = { ...envelopeOf(base), steps: assignEditStepIds(baseIds, history, input.steps) };
  const validated = validate(candidate, {
    config: ctx.config.pipeline,
    now: ctx.now,
    edit: { editorId: input.editorId, base },
  });
  if (!validated.ok) {
    // Journaled: who tried to change the plan, and what the pipeline refused (the plan is unchanged).
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
    return {
      commit,
      result: { kind: 'invalid', phase: validated.phase, diagnostics: validated.diagnostics },
    };
  }
  const plan = validated.plan;
  const diff = diffPlans(base, plan);
  if (diff.isEmpty && base.digest === plan.digest) {
    return { result: { kind: 'unchanged', run: viewOf(ctx, input.runId, state) } };
  }

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
          : ({ by: 'user', userId: input.editorId, version: versionNumber, change } satisfies Provenance),
      ];
    }),
  );
  for (const step of plan.steps) history[step.id] = step.digest;
  const version: StoredVersion = {
    version: versionNumber,
    plan,
    provenance,
    createdBy: input.editorId,
    createdAt: ctx.now,
    baseVersion: state.current.version,
    stepHistory: history,
  };
  const commit = commitFor(ctx, snapshot, input.runId)
    .set(ctx.keys.forRun(input.runId).version(versionNumber), JSON.stringify(version))
    .run({ version: versionNumber, plan_digest: plan.digest, recheck_problem: '' })
    .journal(
      {
        type: 'edited',
        editor: input.editorId,
        baseVersion: state.current.version,
        version: versionNumber,
        before: base,
        after: plan,
        diff,
      },
      ctx.now,
      plan.digest,
    );
  const next = { ...state, current: version, fields: { ...state.fields, version: versionNumber } };
  return {
    commit,
    result: { kind: 'edited', run: viewOf(ctx, input.runId, next), previous: state.current, diff },
  };
}

/** A diff message's partial keep. */
export type DiffAction = 'remove_step' | 'revert_step' | 'discard_edit';

/**
 * The steps of the new edit a diff action asks for, given the edited version and the version it was
 * derived from; or why there is none (a step that did not exist before the edit).
 */
export function diffActionSteps(
  edited: StoredVersion,
  base: StoredVersion,
  action: DiffAction,
  stepId: string | undefined,
): { readonly ok: true; readonly steps: EditedStep[] } | { readonly ok: false; readonly reason: string } {
  const plain = (steps: readonly { id: string; tool: string; args: JsonObject }[]) =>
    steps.map(({ id, tool, args }) => ({ id, tool, args }));
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
