/**
 * submitPlan: a verified submission becomes v1 of its run. An invalid plan is decided `invalid` at
 * once; a plan whose steps are all `auto` is approved by policy at once; anything else is pending.
 * Idempotent: the same text again is a `duplicate`; other text under the same run id is refused
 * (`run_exists`) — never resumed or overwritten.
 */
import {
  CountersignError,
  type Diagnostic,
  type Phase,
  type Provenance,
  sha256Hex,
  type ValidatedPlan,
  validateWith,
} from '../../pipeline/index.ts';
import { buildDecision, sealDecision } from '../decision-builder.ts';
import { stateOf } from '../guard.ts';
import { releaseReady } from '../releases.ts';
import type { RunCommit, RunFieldUpdate } from '../run-commit.ts';
import type { RunFields, RunSnapshot } from '../store.ts';
import type { JournalEvent, StoredVersion } from '../types.ts';
import {
  type Attempt,
  commitFor,
  decidedState,
  decideRun,
  hooksOf,
  type UseCaseContext,
  viewOf,
} from './context.ts';

export interface SubmitPlanInput {
  readonly runId: string;
  readonly agent: string;
  /** The plan text exactly as the agent sent it (kept in the journal). */
  readonly raw: string;
  readonly nonce?: string;
}

export function submitPlan(ctx: UseCaseContext, snapshot: RunSnapshot, input: SubmitPlanInput): Attempt {
  const submissionDigest = sha256Hex(input.raw);
  if (snapshot.fields !== undefined) {
    if (snapshot.fields.submissionDigest !== submissionDigest) {
      return { result: { kind: 'run_exists', runId: input.runId } };
    }
    const existing = stateOf(snapshot);
    if (existing !== undefined)
      return { result: { kind: 'duplicate', run: viewOf(ctx, input.runId, existing) } };
    // Refused as invalid: there is no run to show, only the answer it got, given again.
    const decision = snapshot.invalidDecision;
    if (decision === undefined || decision.phase === null) {
      throw new CountersignError(
        'state_corrupt',
        `run ${input.runId} was refused as invalid but has no invalid decision`,
      );
    }
    return {
      result: { kind: 'invalid', phase: decision.phase, diagnostics: decision.diagnostics, decision },
    };
  }
  const { now } = ctx;
  const commit = commitFor(ctx, snapshot, input.runId);
  const submitted: JournalEvent = {
    type: 'submitted',
    raw: input.raw,
    agent: input.agent,
    ...(input.nonce === undefined ? {} : { nonce: input.nonce }),
  };
  commit.journal(submitted, now, null);
  const base = { agent: input.agent, created_at: now, submission_digest: submissionDigest } as const;

  const validated = validateSubmission(ctx, input);
  if (!validated.ok) return decideInvalid(ctx, commit, input, validated, base);
  return storeFirstVersion(ctx, commit, input, validated.plan, { ...base, submissionDigest });
}

/** No version exists: the decision names the phase and its diagnostics, and no plan. */
function decideInvalid(
  ctx: UseCaseContext,
  commit: RunCommit,
  input: SubmitPlanInput,
  validated: { readonly phase: Phase; readonly diagnostics: readonly Diagnostic[] },
  base: RunFieldUpdate,
): Attempt {
  const decision = ctx.sign(
    buildDecision({
      runId: input.runId,
      agent: input.agent,
      status: 'invalid',
      decidedAt: ctx.now,
      decidedBy: null,
      phase: validated.phase,
      diagnostics: validated.diagnostics,
      configDigest: ctx.config.digest,
    }),
  );
  sealDecision(commit, ctx.keys.forRun(input.runId), ctx.keys.decided(input.agent), decision, {
    ...base,
    version: 0,
    expires_at: 0,
  });
  commit.journal(
    { type: 'invalid', phase: validated.phase, diagnostics: validated.diagnostics },
    ctx.now,
    null,
  );
  const { phase, diagnostics } = validated;
  return { commit, decision, result: { kind: 'invalid', phase, diagnostics, decision } };
}

/** v1 stored; approved by policy at once when no step needs a person, else pending. */
function storeFirstVersion(
  ctx: UseCaseContext,
  commit: RunCommit,
  input: SubmitPlanInput,
  plan: ValidatedPlan,
  base: RunFieldUpdate & { readonly submissionDigest: string },
): Attempt {
  const { now } = ctx;
  const { submissionDigest, ...fields } = base;
  const version: StoredVersion = {
    version: 1,
    plan,
    provenance: Object.fromEntries(
      plan.steps.map((step) => [step.id, { by: 'agent', version: 1 } satisfies Provenance]),
    ),
    createdBy: 'agent',
    createdAt: now,
    stepHistory: Object.fromEntries(plan.steps.map((step) => [step.id, step.digest])),
  };
  const expiresAt = Date.parse(plan.expiresAt);
  commit
    .set(ctx.keys.forRun(input.runId).version(1), JSON.stringify(version))
    .run({ ...fields, version: 1, expires_at: expiresAt, plan_digest: plan.digest })
    .journal(
      {
        type: 'validated',
        version: 1,
        steps: plan.steps.map((step) => ({
          id: step.id,
          tool: step.tool,
          digest: step.digest,
          route: step.route.kind,
        })),
      },
      now,
      plan.digest,
    );
  const state = {
    runId: input.runId,
    fields: initialFields(input.agent, now, expiresAt, submissionDigest, plan.digest),
    current: version,
    approvals: [],
    outcomes: {},
  };
  if (plan.steps.every((step) => step.route.kind === 'auto')) {
    const decision = decideRun(ctx, commit, state, { status: 'approved', by: 'policy' });
    commit.journal({ type: 'approved', version: 1, planDigest: plan.digest, by: 'policy' }, now, plan.digest);
    const run = viewOf(ctx, input.runId, decidedState(state, decision));
    return { commit, decision, result: { kind: 'approved', run, decision } };
  }
  commit.run({ status: 'pending' });
  // `auto` steps marked `continue` with nothing to wait for run at once.
  const released = releaseReady(ctx, commit, state).state;
  return { commit, result: { kind: 'pending', run: viewOf(ctx, input.runId, released) } };
}

/** The plan validated, and bound to the signed submission: the text must name the run and agent it was signed for. */
function validateSubmission(
  ctx: UseCaseContext,
  input: SubmitPlanInput,
): { ok: true; plan: ValidatedPlan } | { ok: false; phase: Phase; diagnostics: readonly Diagnostic[] } {
  const result = validateWith(input.raw, { config: ctx.config.pipeline, now: ctx.now }, hooksOf(ctx));
  if (!result.ok) return result;
  for (const [field, signed] of [
    ['runId', input.runId],
    ['agent', input.agent],
  ] as const) {
    if (result.plan[field] !== signed) {
      return {
        ok: false,
        phase: 'parse',
        diagnostics: [
          {
            phase: 'parse',
            code: 'invalid_field',
            path: [field],
            message: `${field} in the plan (${result.plan[field]}) does not match the signed submission (${signed})`,
          },
        ],
      };
    }
  }
  return result;
}

function initialFields(
  agent: string,
  now: number,
  expiresAt: number,
  submissionDigest: string,
  planDigest: string | null,
): RunFields {
  return {
    agent,
    status: 'pending',
    version: 1,
    createdAt: now,
    expiresAt,
    escalationLevel: 0,
    escalatedTo: [],
    journalSeq: 0,
    journalHead: '',
    planDigest,
    submissionDigest,
  };
}
