import type { Redis } from 'ioredis';
import type { CountersignConfig } from '../config/index.ts';
import {
  assignEditStepIds,
  type Decision,
  type DecisionStatus,
  type Diagnostic,
  diffPlans,
  type EditedStep,
  type JsonObject,
  type Phase,
  type Provenance,
  sha256Hex,
  type ValidatedPlan,
  validate,
} from '../pipeline/index.ts';
import { buildDecision } from './decision-builder.ts';
import { createKeys, type Keys, type RunKeys } from './keys.ts';
import { type OutcomeResult, readOutcomes, recordOutcome } from './outcomes.ts';
import {
  type Authority,
  awaitedSteps,
  blockedSteps,
  explainNoAuthority,
  mayEdit,
  stepsToApprove,
} from './rules.ts';
import { authorityOf, escalatedLevels, projectRun, type RunStateInput } from './run-view.ts';
import {
  approvalEntry,
  commitLoop,
  loadRun,
  loadStepHistory,
  loadVersion,
  RunCommit,
  type RunFields,
  type RunSnapshot,
  type Attempt as StoreAttempt,
} from './store.ts';
import type {
  ApprovalRecord,
  JournalEvent,
  RunView,
  StepOutcome,
  StoredVersion,
  UseCaseResult,
} from './types.ts';

export interface ApprovalServiceOptions {
  /** A shared ioredis connection (only non-blocking commands are used). */
  readonly redis: Redis;
  readonly config: CountersignConfig;
  /** Resolved HMAC secret per agent, used to sign decisions. */
  readonly secrets: (agent: string) => string | undefined;
  /** Key prefix (default `cs`). */
  readonly prefix?: string;
  /** Milliseconds since the epoch; injected so rules are testable without sleeping. */
  readonly clock?: () => number;
  /** The decision sink (the `decisions-<agent>` queue). Called after a decision is committed. */
  readonly deliver?: (decision: Decision) => Promise<void>;
  /** Where failures that must not reach a user are reported (a failed delivery is retried by the sweep). */
  readonly onError?: (error: unknown, context: string) => void;
}

export type { EditedStep } from '../pipeline/index.ts';

/** One attempt at a use case, plus the decision its commit seals (delivered once committed). */
interface Attempt<R> extends StoreAttempt<R> {
  readonly decision?: Decision;
}

/**
 * The approval state machine (DESIGN.md §7): the only writer of approval state. Every use case reads the
 * run, decides in plain TypeScript, and commits with compare-and-set on the run's `rev`; a lost race
 * re-reads and decides again, so concurrent clicks, timers and replicas resolve to exactly one outcome
 * and every use case is idempotent.
 */
export class ApprovalService {
  readonly keys: Keys;
  private readonly redis: Redis;
  private readonly config: CountersignConfig;
  private readonly secrets: (agent: string) => string | undefined;
  private readonly clock: () => number;
  private readonly deliverDecision: ((decision: Decision) => Promise<void>) | undefined;
  private readonly onError: (error: unknown, context: string) => void;

  constructor(options: ApprovalServiceOptions) {
    this.redis = options.redis;
    this.config = options.config;
    this.secrets = options.secrets;
    this.keys = createKeys(options.prefix);
    this.clock = options.clock ?? Date.now;
    this.deliverDecision = options.deliver;
    this.onError = options.onError ?? ((error, context) => console.error(`countersign: ${context}:`, error));
  }

  /**
   * Stores v1 of a run from a verified submission. Invalid plans and plans whose steps are all `auto`
   * are decided at once. Re-submitting the same run id with the same text is idempotent (`duplicate`,
   * or for a plan refused as invalid, the same `invalid` answer again); with different text it is
   * refused (`run_exists`) — never resumed or overwritten.
   */
  submitPlan(input: { runId: string; agent: string; raw: string; nonce?: string }): Promise<UseCaseResult> {
    const submissionDigest = sha256Hex(input.raw);
    const decide = (
      snapshot: RunSnapshot,
      now: number,
    ): Attempt<UseCaseResult> | Promise<Attempt<UseCaseResult>> => {
      if (snapshot.fields !== undefined) {
        if (snapshot.fields.submissionDigest !== submissionDigest) {
          return { result: { kind: 'run_exists', runId: input.runId } };
        }
        // Refused as invalid: there is no run to show, only the decision it got.
        if (snapshot.current === undefined)
          return this.invalidAgain(input.runId).then((result) => ({ result }));
        return { result: { kind: 'duplicate', run: this.view(snapshot) } };
      }
      const keys = this.keys.forRun(input.runId);
      const commit = new RunCommit(keys, snapshot);
      const submitted: JournalEvent = {
        type: 'submitted',
        raw: input.raw,
        agent: input.agent,
        ...(input.nonce === undefined ? {} : { nonce: input.nonce }),
      };
      commit.journal(submitted, now, null);
      const base = { agent: input.agent, created_at: now, submission_digest: submissionDigest };

      const validated = this.validateSubmission(input, now);
      if (!validated.ok) {
        const decision = this.decide({
          runId: input.runId,
          agent: input.agent,
          status: 'invalid',
          decidedAt: now,
          decidedBy: null,
          phase: validated.phase,
          diagnostics: validated.diagnostics,
        });
        commit
          .run({ ...base, status: 'invalid', version: 0, expires_at: 0, decided_at: now })
          .journal({ type: 'invalid', phase: validated.phase, diagnostics: validated.diagnostics }, now, null)
          .set(keys.decision, JSON.stringify(decision))
          .publish(this.decidedChannel(input.agent), input.runId);
        return {
          commit,
          decision,
          result: { kind: 'invalid', phase: validated.phase, diagnostics: validated.diagnostics, decision },
        };
      }

      const plan = validated.plan;
      const provenance: Record<string, Provenance> = Object.fromEntries(
        plan.steps.map((step) => [step.id, { by: 'agent', version: 1 } satisfies Provenance]),
      );
      const version: StoredVersion = {
        version: 1,
        plan,
        provenance,
        createdBy: 'agent',
        createdAt: now,
        stepHistory: Object.fromEntries(plan.steps.map((step) => [step.id, step.digest])),
      };
      commit
        .set(keys.version(1), JSON.stringify(version))
        .run({ ...base, version: 1, expires_at: Date.parse(plan.expiresAt), plan_digest: plan.digest })
        .journal({ type: 'validated', version: 1, steps: validatedSteps(plan) }, now, plan.digest);

      const state = {
        fields: this.initialFields(input.agent, now, plan, submissionDigest),
        current: version,
        approvals: [],
      };
      if (plan.steps.every((step) => step.route.kind === 'auto')) {
        const decision = this.decide({
          ...this.decisionBase(state),
          status: 'approved',
          decidedAt: now,
          decidedBy: 'policy',
        });
        commit
          .run({ status: 'approved', decided_by: 'policy', decided_at: now })
          .journal({ type: 'approved', version: 1, planDigest: plan.digest, by: 'policy' }, now, plan.digest)
          .set(keys.decision, JSON.stringify(decision))
          .publish(this.decidedChannel(input.agent), input.runId);
        const decided = {
          ...state,
          fields: { ...state.fields, status: 'approved' as const, decidedBy: 'policy', decidedAt: now },
        };
        return {
          commit,
          decision,
          result: { kind: 'approved', run: this.viewOf(input.runId, decided), decision },
        };
      }
      commit.run({ status: 'pending' });
      return { commit, result: { kind: 'pending', run: this.viewOf(input.runId, state) } };
    };
    // A submission nearly always creates its run: decide without reading first (saves a round trip).
    return this.transact(input.runId, decide, { expectAbsent: true });
  }

  /**
   * Journals a submission refused before it became a run (bad signature, replay, unknown agent). The
   * sender is unauthenticated, so nothing is written under the run's keys: refusals go to a capped log.
   */
  async refuseSubmission(input: { runId: string; agent: string; reason: string }): Promise<void> {
    const record = JSON.stringify({ at: new Date(this.clock()).toISOString(), ...input });
    await this.redis.multi().lpush(this.keys.refused, record).ltrim(this.keys.refused, 0, 9_999).exec();
  }

  /**
   * One person approves every step of the current version they may approve. The run is approved when
   * no review step lacks approvals and nothing is blocked — after the authorize phase is re-run against
   * today's config and data.
   */
  approve(input: { runId: string; version: number; userId: string }): Promise<UseCaseResult> {
    return this.transact<UseCaseResult>(input.runId, (snapshot, now) => {
      const gate = this.gate(snapshot, input, 'approve', now);
      if ('result' in gate) return gate;
      const { state, commit } = gate;
      const authority = this.authority(state.fields);
      const { eligible, fresh } = stepsToApprove(state.current, state.approvals, input.userId, authority);
      if (eligible.length === 0) {
        return this.refuse(
          commit,
          state,
          input,
          'approve',
          'unauthorized',
          explainNoAuthority(state.current, input.userId, authority),
          now,
        );
      }
      const added: ApprovalRecord[] = fresh.map((step) => ({
        stepId: step.id,
        stepDigest: step.digest,
        userId: input.userId,
        version: state.current.version,
        at: now,
      }));
      const approvals = [...state.approvals, ...added];
      const keys = this.keys.forRun(input.runId);
      for (const approval of added) commit.hset(keys.approvals, approvalEntry(approval));
      if (added.length > 0) {
        commit.journal(
          {
            type: 'approval',
            userId: input.userId,
            version: state.current.version,
            steps: added.map((a) => ({ id: a.stepId, digest: a.stepDigest })),
          },
          now,
          state.current.plan.digest,
        );
      }
      const next = { ...state, approvals };
      const approvedSteps = fresh.map((step) => step.id);
      if (
        awaitedSteps(state.current, approvals, authority).length > 0 ||
        blockedSteps(state.current).length > 0
      ) {
        return added.length > 0
          ? { commit, result: { kind: 'awaiting', run: this.viewOf(input.runId, next), approvedSteps } }
          : { result: { kind: 'awaiting', run: this.viewOf(input.runId, next), approvedSteps } };
      }

      // Re-check at the boundary: policy and the tools' checks as they are now, not as they were.
      const recheck = validate(envelopeOf(state.current.plan), { config: this.config.pipeline, now });
      if (!recheck.ok) {
        commit.journal(
          {
            type: 'refused',
            action: 'approve',
            version: state.current.version,
            userId: input.userId,
            reason: 'recheck_failed',
            detail: recheck.diagnostics.map((d) => d.message).join('; '),
          },
          now,
          state.current.plan.digest,
        );
        const recheckProblem = recheck.diagnostics
          .map((d) => d.message)
          .join('; ')
          .slice(0, 2000);
        commit.run({ recheck_problem: recheckProblem });
        const run = this.viewOf(input.runId, { ...next, fields: { ...next.fields, recheckProblem } });
        return {
          commit,
          result: { kind: 'invalid', phase: recheck.phase, diagnostics: recheck.diagnostics, run },
        };
      }
      const rechecked: StoredVersion = { ...state.current, plan: recheck.plan };
      if (awaitedSteps(rechecked, approvals, authority).length > 0 || blockedSteps(rechecked).length > 0) {
        // The policy tightened since the card was posted: more approvals are needed now.
        const current = { ...next, current: rechecked };
        return {
          commit,
          result: { kind: 'awaiting', run: this.viewOf(input.runId, current), approvedSteps },
        };
      }

      const decision = this.decide({
        ...this.decisionBase(next),
        status: 'approved',
        decidedAt: now,
        decidedBy: input.userId,
      });
      this.sealDecision(commit, keys, state.fields.agent, input.runId, decision, now, input.userId);
      commit.journal(
        {
          type: 'approved',
          version: state.current.version,
          planDigest: state.current.plan.digest,
          by: input.userId,
        },
        now,
        state.current.plan.digest,
      );
      const decided = this.decidedState(next, 'approved', input.userId, now);
      return {
        commit,
        decision,
        result: { kind: 'approved', run: this.viewOf(input.runId, decided), decision },
      };
    });
  }

  /** Rejects the run; anyone who may approve any of its steps may reject it. */
  reject(input: { runId: string; version: number; userId: string; reason: string }): Promise<UseCaseResult> {
    return this.transact<UseCaseResult>(input.runId, (snapshot, now) => {
      const gate = this.gate(snapshot, input, 'reject', now);
      if ('result' in gate) return gate;
      const { state, commit } = gate;
      const authority = this.authority(state.fields);
      if (stepsToApprove(state.current, state.approvals, input.userId, authority).eligible.length === 0) {
        return this.refuse(
          commit,
          state,
          input,
          'reject',
          'unauthorized',
          explainNoAuthority(state.current, input.userId, authority),
          now,
        );
      }
      const reason = input.reason.trim().slice(0, 2000) || 'no reason given';
      const decision = this.decide({
        ...this.decisionBase(state),
        status: 'rejected',
        decidedAt: now,
        decidedBy: input.userId,
        reason,
      });
      const keys = this.keys.forRun(input.runId);
      this.sealDecision(commit, keys, state.fields.agent, input.runId, decision, now, input.userId, reason);
      commit.journal(
        { type: 'rejected', version: state.current.version, userId: input.userId, reason },
        now,
        state.current.plan.digest,
      );
      const decided = this.decidedState(state, 'rejected', input.userId, now, reason);
      return {
        commit,
        decision,
        result: { kind: 'rejected', run: this.viewOf(input.runId, decided), decision },
      };
    });
  }

  /**
   * An edit is a new, untrusted plan: the base version must still be current, and the candidate goes
   * through the whole pipeline plus may_author. On success it becomes version n+1; approvals stay
   * bound to step digests, so touched steps need approving again and untouched ones keep theirs.
   */
  applyEdit(input: {
    runId: string;
    baseVersion: number;
    editorId: string;
    steps: readonly EditedStep[];
  }): Promise<UseCaseResult> {
    return this.transact<UseCaseResult>(input.runId, async (snapshot, now) => {
      const gate = this.gate(
        snapshot,
        { ...input, version: input.baseVersion, userId: input.editorId },
        'edit',
        now,
      );
      if ('result' in gate) return gate;
      const { state, commit } = gate;
      const authority = this.authority(state.fields);
      if (!mayEdit(authority, input.editorId)) {
        return this.refuse(
          commit,
          state,
          { ...input, version: input.baseVersion, userId: input.editorId },
          'edit',
          'unauthorized',
          'you are in no group that may edit plans',
          now,
        );
      }
      const base = state.current.plan;
      const keys = this.keys.forRun(input.runId);
      const history = await loadStepHistory(this.redis, keys, state.current);
      const baseIds = new Set(base.steps.map((step) => step.id));
      const candidate = { ...envelopeOf(base), steps: assignEditStepIds(baseIds, history, input.steps) };
      const validated = validate(candidate, {
        config: this.config.pipeline,
        now,
        edit: { editorId: input.editorId, base },
      });
      if (!validated.ok) {
        return { result: { kind: 'invalid', phase: validated.phase, diagnostics: validated.diagnostics } };
      }
      const plan = validated.plan;
      const diff = diffPlans(base, plan);
      if (diff.isEmpty && base.digest === plan.digest)
        return { result: { kind: 'unchanged', run: this.view(snapshot) } };

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
        createdAt: now,
        baseVersion: state.current.version,
        stepHistory: history,
      };
      commit
        .set(keys.version(versionNumber), JSON.stringify(version))
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
          now,
          plan.digest,
        );
      const next = { ...state, current: version, fields: { ...state.fields, version: versionNumber } };
      return {
        commit,
        result: { kind: 'edited', run: this.viewOf(input.runId, next), previous: state.current, diff },
      };
    });
  }

  /**
   * The diff message's partial keeps, each producing a new version from the edit shown: remove a step
   * the edit added, revert a step it changed, or discard the whole edit (back to the version before it).
   * They go through `applyEdit`, so the same checks apply (current version, pipeline, may_author).
   */
  async applyDiffAction(input: {
    runId: string;
    version: number;
    userId: string;
    action: 'remove_step' | 'revert_step' | 'discard_edit';
    stepId?: string;
  }): Promise<UseCaseResult> {
    const keys = this.keys.forRun(input.runId);
    const edited = await loadVersion(this.redis, keys, input.version);
    if (edited === undefined) return { kind: 'not_found', runId: input.runId };
    const base =
      edited.baseVersion === undefined ? undefined : await loadVersion(this.redis, keys, edited.baseVersion);
    if (base === undefined) {
      return {
        kind: 'unauthorized',
        reason: `version ${input.version} is not an edit, so there is nothing to undo`,
      };
    }
    const plain = (steps: readonly { id: string; tool: string; args: JsonObject }[]) =>
      steps.map(({ id, tool, args }) => ({ id, tool, args }));
    let steps: EditedStep[];
    if (input.action === 'discard_edit') {
      steps = plain(base.plan.steps);
    } else if (input.action === 'remove_step') {
      steps = plain(edited.plan.steps.filter((step) => step.id !== input.stepId));
    } else {
      const original = base.plan.steps.find((step) => step.id === input.stepId);
      if (original === undefined)
        return { kind: 'unauthorized', reason: `step ${input.stepId} did not exist before this edit` };
      steps = plain(edited.plan.steps.map((step) => (step.id === input.stepId ? original : step)));
    }
    return this.applyEdit({ runId: input.runId, baseVersion: input.version, editorId: input.userId, steps });
  }

  /** The expiry timer for `version`. Does nothing but journal a refusal when that version is stale or decided. */
  expire(input: { runId: string; version: number }): Promise<UseCaseResult> {
    return this.transact<UseCaseResult>(input.runId, (snapshot, now) => {
      const stale = this.staleTimer(snapshot, input, `expire-v${input.version}`, now);
      if (stale !== undefined) return stale;
      const state = this.stateOf(snapshot);
      if (now < state.fields.expiresAt) return { result: { kind: 'pending', run: this.view(snapshot) } };
      return this.expireNow(snapshot, now);
    });
  }

  /** An escalation level fired for `version`: remember who was notified (they may now act on the run). */
  escalate(input: {
    runId: string;
    version: number;
    level: number;
    notified: readonly string[];
  }): Promise<UseCaseResult> {
    return this.transact<UseCaseResult>(input.runId, (snapshot, now) => {
      const stale = this.staleTimer(snapshot, input, `escalate-v${input.version}-l${input.level}`, now);
      if (stale !== undefined) return stale;
      const state = this.stateOf(snapshot);
      if (now >= state.fields.expiresAt) return this.expireNow(snapshot, now);
      const escalatedTo = [...new Set([...state.fields.escalatedTo, ...input.notified])];
      const levels = { ...escalatedLevels(this.config, state.fields) };
      for (const userId of input.notified) {
        levels[userId] = [...new Set([...(levels[userId] ?? []), input.level])].sort((a, b) => a - b);
      }
      const commit = new RunCommit(this.keys.forRun(input.runId), snapshot)
        .run({
          escalation_level: Math.max(input.level, state.fields.escalationLevel),
          escalated_to: escalatedTo,
          escalated_levels: levels,
          escalated_at: now,
        })
        .journal(
          { type: 'escalated', version: input.version, level: input.level, notified: [...input.notified] },
          now,
          state.current.plan.digest,
        );
      const next = {
        ...state,
        fields: {
          ...state.fields,
          escalationLevel: Math.max(input.level, state.fields.escalationLevel),
          escalatedTo,
          escalatedLevels: levels,
          escalatedAt: now,
        },
      };
      return {
        commit,
        result: { kind: 'escalated', run: this.viewOf(input.runId, next), level: input.level },
      };
    });
  }

  /** Records where the run's card is (posted once, updated in place for later versions). */
  async recordPosted(input: { runId: string; version: number; channel: string; ts: string }): Promise<void> {
    await this.transact(input.runId, (snapshot, now) => {
      if (snapshot.fields === undefined) return { result: undefined };
      const keys = this.keys.forRun(input.runId);
      const commit = new RunCommit(keys, snapshot)
        .hset(keys.messages, { card: JSON.stringify({ channel: input.channel, ts: input.ts }) })
        .journal({ type: 'posted', ...input }, now, snapshot.fields.planDigest);
      return { commit, result: undefined };
    });
  }

  /**
   * Slack messages that show this run besides its card (diff messages, escalations), by name, so a
   * decision can update every one of them. Bookkeeping only: no state transition, no journal.
   */
  async recordMessage(runId: string, name: string, ref: { channel: string; ts: string }): Promise<void> {
    await this.redis.hset(this.keys.forRun(runId).messages, name, JSON.stringify(ref));
  }

  /** Every message recorded for the run, by name (`card`, and whatever `recordMessage` stored). */
  async messages(runId: string): Promise<Record<string, { channel: string; ts: string }>> {
    const hash = await this.redis.hgetall(this.keys.forRun(runId).messages);
    return Object.fromEntries(
      Object.entries(hash).map(([name, text]) => [name, JSON.parse(text) as { channel: string; ts: string }]),
    );
  }

  /** The agent reports a step's outcome; see `recordOutcome` in outcomes.ts. */
  recordOutcome(input: {
    runId: string;
    stepId: string;
    status: 'applying' | 'applied' | 'failed';
    detail?: string;
  }): Promise<OutcomeResult> {
    return recordOutcome(this.redis, this.keys, input, this.outcomeOptions());
  }

  /**
   * Whether `userId` may reject `runId` at `version` now; if not, the answer to show — unknown run,
   * decided, expired (the click expires it, as every click does), stale, or no step they may speak
   * for. For opening the reject form only to someone who may use it; `reject` decides again when the
   * form comes back.
   */
  async mayReject(input: {
    runId: string;
    version: number;
    userId: string;
  }): Promise<
    { readonly ok: true; readonly run: RunView } | { readonly ok: false; readonly refusal: UseCaseResult }
  > {
    const snapshot = await loadRun(this.redis, this.keys.forRun(input.runId));
    const closed = this.closed(snapshot, input.runId);
    if (closed !== undefined) return { ok: false, refusal: closed };
    const state = this.stateOf(snapshot);
    const run = this.view(snapshot);
    // Past its expiry the click expires the run, as every click does (the gate's rule).
    if (this.clock() >= state.fields.expiresAt) {
      return {
        ok: false,
        refusal: await this.expire({ runId: input.runId, version: state.current.version }),
      };
    }
    if (input.version !== state.current.version) {
      return { ok: false, refusal: { kind: 'stale', run, currentVersion: state.current.version } };
    }
    const authority = this.authority(state.fields);
    if (stepsToApprove(state.current, state.approvals, input.userId, authority).eligible.length > 0) {
      return { ok: true, run };
    }
    const reason = explainNoAuthority(state.current, input.userId, authority);
    return { ok: false, refusal: { kind: 'unauthorized', run, reason } };
  }

  /** The run as people see it now, or undefined for an unknown run id. */
  async getRun(runId: string): Promise<RunView | undefined> {
    const snapshot = await loadRun(this.redis, this.keys.forRun(runId));
    return snapshot.fields === undefined || snapshot.current === undefined ? undefined : this.view(snapshot);
  }

  /** A stored version of a run (for rendering superseded cards and diffs). */
  getVersion(runId: string, version: number): Promise<StoredVersion | undefined> {
    return loadVersion(this.redis, this.keys.forRun(runId), version);
  }

  /** The signed decision, once there is one. */
  async getDecision(runId: string): Promise<Decision | undefined> {
    const text = await this.redis.get(this.keys.forRun(runId).decision);
    return text === null ? undefined : (JSON.parse(text) as Decision);
  }

  /** Outcomes reported per step; `applying` older than `defaults.uncertainAfter` reads as `uncertain`. */
  getOutcomes(runId: string): Promise<StepOutcome[]> {
    return readOutcomes(this.redis, this.keys, runId, this.outcomeOptions());
  }

  /** Pending runs with their expiry (ms), oldest expiry first: what boot-time reconciliation walks. */
  async pendingRuns(): Promise<{ runId: string; expiresAt: number }[]> {
    const entries = await this.redis.zrange(this.keys.pending, '0', '-1', 'WITHSCORES');
    const runs: { runId: string; expiresAt: number }[] = [];
    for (let i = 0; i + 1 < entries.length; i += 2)
      runs.push({ runId: entries[i] ?? '', expiresAt: Number(entries[i + 1]) });
    return runs;
  }

  /**
   * The outbox sweep: delivers decisions that were committed but not confirmed delivered (a process
   * that died between the two). Delivery is idempotent (deterministic job ids). Returns how many.
   */
  async redeliverUndelivered(): Promise<number> {
    const runIds = await this.redis.zrange(this.keys.undelivered, '0', '-1');
    let delivered = 0;
    for (const runId of runIds) {
      const decision = await this.getDecision(runId);
      if (decision === undefined) {
        const run = await this.redis.hget(this.keys.forRun(runId).run, 'status');
        if (run !== null && run !== 'pending') continue; // committing right now; next sweep
        await this.redis.zrem(this.keys.undelivered, runId);
        continue;
      }
      if (await this.deliver(decision)) delivered++;
    }
    return delivered;
  }

  // ── internals ──────────────────────────────────────────────────────────────────────────────────

  /** Runs one transition in the store's commit loop; index writes and delivery follow a commit. */
  private async transact<R>(
    runId: string,
    decide: (snapshot: RunSnapshot, now: number) => Attempt<R> | Promise<Attempt<R>>,
    options: { readonly expectAbsent?: boolean } = {},
  ): Promise<R> {
    const { attempt, snapshot, now, committed } = await commitLoop(
      this.redis,
      this.keys.forRun(runId),
      this.clock,
      decide,
      async (pending, at) => {
        // Into the outbox before the commit, so a crash right after it still gets the decision delivered.
        if (pending.decision !== undefined) await this.redis.zadd(this.keys.undelivered, at, runId);
      },
      options,
    );
    if (committed) await this.afterCommit(runId, snapshot, attempt, now);
    return attempt.result;
  }

  private async afterCommit<R>(
    runId: string,
    snapshot: RunSnapshot,
    outcome: Attempt<R>,
    now: number,
  ): Promise<void> {
    const result = outcome.result as UseCaseResult | undefined;
    // Cross-run indexes live outside the run's hash slot, so they are written after the commit, sent
    // together (one round trip, no MULTI: each write is idempotent and boot-time reconciliation and the
    // outbox sweep tolerate a crash between them); a MULTI costs more CPU than the writes themselves.
    const created = snapshot.fields === undefined;
    const writes: Promise<unknown>[] = [];
    if (created) writes.push(this.redis.zadd(this.keys.runs, now, runId));
    if (created && result?.kind === 'pending') {
      writes.push(this.redis.zadd(this.keys.pending, Date.parse(result.run.current.plan.expiresAt), runId));
    }
    if (outcome.decision !== undefined) writes.push(this.redis.zrem(this.keys.pending, runId));
    await Promise.all(writes);
    if (outcome.decision !== undefined) await this.deliver(outcome.decision);
  }

  /** Delivers one decision and takes it out of the outbox; failures stay for the sweep. */
  private async deliver(decision: Decision): Promise<boolean> {
    if (this.deliverDecision === undefined) {
      await this.redis.zrem(this.keys.undelivered, decision.runId);
      return false;
    }
    try {
      await this.deliverDecision(decision);
      await this.redis.zrem(this.keys.undelivered, decision.runId);
      return true;
    } catch (error) {
      this.onError(error, `delivering the decision for run ${decision.runId} (the outbox sweep retries it)`);
      return false;
    }
  }

  /** Common checks of a click or edit: the run exists, is pending, the version is current, not expired. */
  private gate(
    snapshot: RunSnapshot,
    input: { runId: string; version: number; userId: string },
    action: 'approve' | 'reject' | 'edit',
    now: number,
  ): { state: RunState; commit: RunCommit } | Attempt<UseCaseResult> {
    const closed = this.closed(snapshot, input.runId);
    if (closed !== undefined) return { result: closed };
    const state = this.stateOf(snapshot);
    const commit = new RunCommit(this.keys.forRun(input.runId), snapshot);
    // Expiry is enforced here, at the click: a late or lost timer never lets an expired plan through.
    if (now >= state.fields.expiresAt) return this.expireNow(snapshot, now);
    if (input.version !== state.current.version) {
      return this.refuse(
        commit,
        state,
        input,
        action,
        'stale',
        `version ${input.version} is no longer current; version ${state.current.version} is`,
        now,
        { kind: 'stale', run: this.view(snapshot), currentVersion: state.current.version },
      );
    }
    return { state, commit };
  }

  /** The answer for a run that takes no more actions — unknown, or already decided — else undefined. */
  private closed(snapshot: RunSnapshot, runId: string): UseCaseResult | undefined {
    if (snapshot.fields === undefined || snapshot.current === undefined) return { kind: 'not_found', runId };
    if (snapshot.fields.status === 'pending') return undefined;
    const by = snapshot.fields.decidedBy;
    return {
      kind: 'already_decided',
      run: this.view(snapshot),
      status: snapshot.fields.status,
      ...(by === undefined ? {} : { by }),
    };
  }

  /** Journals a refused action and answers it. */
  private refuse(
    commit: RunCommit,
    state: RunState,
    input: { version: number; userId: string },
    action: 'approve' | 'reject' | 'edit',
    reason: 'stale' | 'unauthorized',
    detail: string,
    now: number,
    result?: UseCaseResult,
  ): Attempt<UseCaseResult> {
    commit.journal(
      { type: 'refused', action, version: input.version, userId: input.userId, reason, detail },
      now,
      state.current.plan.digest,
    );
    return {
      commit,
      result: result ?? { kind: 'unauthorized', reason: detail, run: this.viewOf(state.runId, state) },
    };
  }

  /** A timer aimed at a decided or superseded version: journal it and do nothing else. */
  private staleTimer(
    snapshot: RunSnapshot,
    input: { runId: string; version: number },
    timer: string,
    now: number,
  ): Attempt<UseCaseResult> | undefined {
    if (snapshot.fields === undefined || snapshot.current === undefined) {
      return { result: { kind: 'not_found', runId: input.runId } };
    }
    const fields = snapshot.fields;
    if (fields.status === 'pending' && fields.version === input.version) return undefined;
    const commit = new RunCommit(this.keys.forRun(input.runId), snapshot).journal(
      { type: 'stale_timer', timer, version: input.version, currentVersion: fields.version },
      now,
      fields.planDigest,
    );
    const run = this.view(snapshot);
    const result: UseCaseResult =
      fields.status === 'pending'
        ? { kind: 'stale', run, currentVersion: fields.version }
        : {
            kind: 'already_decided',
            run,
            status: fields.status,
            ...(fields.decidedBy === undefined ? {} : { by: fields.decidedBy }),
          };
    return { commit, result };
  }

  /** Moves a pending run past its expiry to `expired` and seals the decision. */
  private expireNow(snapshot: RunSnapshot, now: number): Attempt<UseCaseResult> {
    const state = this.stateOf(snapshot);
    const keys = this.keys.forRun(state.runId);
    const reason = `expired at ${state.current.plan.expiresAt} — nothing was executed`;
    const decision = this.decide({
      ...this.decisionBase(state),
      status: 'expired',
      decidedAt: now,
      decidedBy: 'timer',
      reason,
    });
    const commit = new RunCommit(keys, snapshot);
    this.sealDecision(commit, keys, state.fields.agent, state.runId, decision, now, 'timer', reason);
    commit.journal({ type: 'expired', version: state.current.version }, now, state.current.plan.digest);
    const decided = this.decidedState(state, 'expired', 'timer', now, reason);
    return {
      commit,
      decision,
      result: { kind: 'expired', run: this.viewOf(state.runId, decided), decision },
    };
  }

  private sealDecision(
    commit: RunCommit,
    keys: RunKeys,
    agent: string,
    runId: string,
    decision: Decision,
    now: number,
    by: string,
    reason?: string,
  ): void {
    commit
      .run({
        status: decision.status as RunFields['status'],
        decided_by: by,
        decided_at: now,
        ...(reason === undefined ? {} : { reason }),
      })
      .set(keys.decision, JSON.stringify(decision))
      .publish(this.decidedChannel(agent), runId);
  }

  private decide(input: Omit<Parameters<typeof buildDecision>[0], 'configDigest'>): Decision {
    const secret = this.secrets(input.agent);
    if (secret === undefined)
      throw new Error(`no secret configured for agent ${input.agent}: cannot sign its decision`);
    return buildDecision({ ...input, configDigest: this.config.digest }, secret);
  }

  private decisionBase(state: {
    runId?: string;
    fields: RunFields;
    current: StoredVersion;
    approvals: readonly ApprovalRecord[];
  }) {
    return {
      runId: state.current.plan.runId,
      agent: state.fields.agent,
      version: state.current,
      approvals: state.approvals,
      authority: this.authority(state.fields),
    };
  }

  private decidedState(
    state: RunState,
    status: DecisionStatus,
    by: string,
    now: number,
    reason?: string,
  ): RunState {
    return {
      ...state,
      fields: {
        ...state.fields,
        status,
        decidedBy: by,
        decidedAt: now,
        ...(reason === undefined ? {} : { reason }),
      },
    };
  }

  /** The answer a plan refused as invalid got, given again to a re-submission of the same text. */
  private async invalidAgain(runId: string): Promise<UseCaseResult> {
    const decision = await this.getDecision(runId);
    if (decision === undefined || decision.phase === null) {
      throw new Error(`run ${runId} was refused as invalid but has no invalid decision`);
    }
    return { kind: 'invalid', phase: decision.phase, diagnostics: decision.diagnostics, decision };
  }

  private validateSubmission(
    input: { runId: string; agent: string; raw: string },
    now: number,
  ): { ok: true; plan: ValidatedPlan } | { ok: false; phase: Phase; diagnostics: readonly Diagnostic[] } {
    const result = validate(input.raw, { config: this.config.pipeline, now });
    if (!result.ok) return result;
    // The signature covers runId and agent beside the text; the text must say the same.
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

  private outcomeOptions() {
    return { clock: this.clock, uncertainAfterMs: this.config.defaults.uncertainAfterMs };
  }

  private decidedChannel(agent: string): string {
    return this.keys.decided(agent);
  }

  private authority(fields: RunFields): Authority {
    return authorityOf(this.config, fields);
  }

  private initialFields(
    agent: string,
    now: number,
    plan: ValidatedPlan,
    submissionDigest: string,
  ): RunFields {
    return {
      agent,
      status: 'pending',
      version: 1,
      createdAt: now,
      expiresAt: Date.parse(plan.expiresAt),
      escalationLevel: 0,
      escalatedTo: [],
      journalSeq: 0,
      journalHead: '',
      planDigest: plan.digest,
      submissionDigest,
    };
  }

  private stateOf(snapshot: RunSnapshot): RunState {
    if (snapshot.fields === undefined || snapshot.current === undefined)
      throw new Error('stateOf: run does not exist');
    return {
      runId: snapshot.current.plan.runId,
      fields: snapshot.fields,
      current: snapshot.current,
      approvals: snapshot.approvals,
    };
  }

  private view(snapshot: RunSnapshot): RunView {
    const state = this.stateOf(snapshot);
    return this.viewOf(state.runId, state);
  }

  private viewOf(runId: string, state: RunStateInput): RunView {
    return projectRun(this.config, runId, state);
  }
}

interface RunState {
  readonly runId: string;
  readonly fields: RunFields;
  readonly current: StoredVersion;
  readonly approvals: readonly ApprovalRecord[];
}

/** The plan envelope of a validated plan: what `validate` accepts back (no digests, routes or notes). */
export function envelopeOf(plan: ValidatedPlan) {
  return {
    runId: plan.runId,
    agent: plan.agent,
    ...(plan.summary === undefined ? {} : { summary: plan.summary }),
    ...(plan.context === undefined ? {} : { context: plan.context }),
    expiresAt: plan.expiresAt,
    steps: plan.steps.map((step) => ({ id: step.id, tool: step.tool, args: step.args })),
  };
}

/** What the journal's `validated` record keeps of a plan (the plan is in its version document). */
function validatedSteps(plan: ValidatedPlan) {
  return plan.steps.map((step) => ({
    id: step.id,
    tool: step.tool,
    digest: step.digest,
    route: step.route.kind,
  }));
}
