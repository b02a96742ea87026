/**
 * The approval state machine (docs/architecture.md §7): the only writer of approval state. Each command reads the
 * run, hands the snapshot to one use case (src/approvals/use-cases, pure), and commits what it decided
 * with compare-and-set on the run's `rev`; a lost race re-reads and decides again, so concurrent
 * clicks, timers and replicas resolve to exactly one outcome and every command is idempotent.
 * Committed results are published to `onCommitted` listeners (timers, metrics, Slack), which render
 * and schedule what approvals decided (see `PublishOptions`).
 */

import type { ErrorReporter } from '../log.ts';
import {
  type Decision,
  type HookResults,
  type HookTimer,
  type ReceiptSigner,
  signDecision,
  signRelease,
} from '../pipeline/index.ts';
import type { DecisionSigner } from './decision-builder.ts';
import { DEFAULT_EDIT_WINDOW_MS, EditWindow, touchedSince } from './edit-window.ts';
import { approveRights, checkAction, editRights, type RunState, rejectRights, stateOf } from './guard.ts';
import { CommandHooks } from './hook-gathering.ts';
import { Outbox } from './outbox.ts';
import { type OutcomeResult, recordOutcome } from './outcomes.ts';
import { ApprovalQueries, type QueryOptions } from './queries.ts';
import { type ReleaseSigner, releaseReady } from './releases.ts';
import { commitLoop } from './run-commit.ts';
import { projectRun } from './run-view.ts';
import type { ChangeListener, ClickAnswer, CommittedListener, PublishOptions } from './service-types.ts';
import { loadRun, loadRunAt, type RunSnapshot } from './store.ts';
import type { RunView, UseCaseResult } from './types.ts';

export type { ChangeListener, ClickAnswer, CommittedListener, PublishOptions } from './service-types.ts';

import { type ApproveInput, approve } from './use-cases/approve.ts';
import type { Attempt, UseCaseContext } from './use-cases/context.ts';
import { applyDiffAction, applyEdit, type DiffActionInput, type EditInput } from './use-cases/edit.ts';
import { type PostedInput, recordPosted } from './use-cases/record-posted.ts';
import { type RejectInput, reject } from './use-cases/reject.ts';
import { type SubmitPlanInput, submitPlan } from './use-cases/submit-plan.ts';
import {
  type ChainTimerInput,
  type EscalateInput,
  escalate,
  expire,
  remind,
  type TimerInput,
} from './use-cases/timers.ts';

export interface ApprovalServiceOptions extends QueryOptions {
  /** Countersign's key: every decision carries its Ed25519 receipt (docs/receipts.md). */
  readonly signer: ReceiptSigner;
  /** The decision sink (the `decisions-<agent>` queue). Called after a decision is committed. */
  readonly deliver?: (decision: Decision) => Promise<void>;
  /** Where failures that must not reach a user are reported (a failed delivery is retried by the sweep). */
  readonly onError?: ErrorReporter;
  /** The timer the tools' hook budgets run on (default `setTimeout`; tests pass their own). */
  readonly hookTimer?: HookTimer;
}

/** A rendering for a claim turning `uncertain` comes this long after it does (`deriveOutcome` is strict). */
const UNCERTAIN_MARGIN_MS = 1_000;

/** How a command runs: publishing, creating, quiet (no rendering), and the hooks gathered before it. */
type RunOptions = PublishOptions & {
  readonly expectAbsent?: boolean;
  readonly quiet?: boolean;
  readonly hooks?: HookResults | undefined;
};

/** KEYS[1] the `changed` set; ARGV[1] the run; ARGV[2] the newest mark the renderer saw. Removes the run when not marked later. */
const CLEAR_IF_NOT_NEWER = `
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) <= tonumber(ARGV[2]) then return redis.call('ZREM', KEYS[1], ARGV[1]) end
return 0`;

export class ApprovalService extends ApprovalQueries {
  private readonly sign: DecisionSigner;
  private readonly signRelease: ReleaseSigner;
  private readonly outbox: Outbox;
  /** Each agent's sliding edit window and drift alarm (edit-window.ts). */
  readonly editWindow: EditWindow;
  private readonly onError: ErrorReporter;
  private readonly listeners: CommittedListener[] = [];
  private readonly changeListeners: ChangeListener[] = [];
  private readonly deferred = new Set<Promise<void>>();
  private readonly hooks: CommandHooks;

  constructor(options: ApprovalServiceOptions) {
    super(options);
    this.onError = options.onError ?? ((error, context) => console.error(`countersign: ${context}:`, error));
    this.hooks = new CommandHooks({
      config: this.config,
      ...(options.hookTimer === undefined ? {} : { timer: options.hookTimer }),
      now: () => this.now(),
      getVersion: (runId, version) => this.getVersion(runId, version),
      runState: async (runId) => stateOf(await loadRun(this.redis, this.keys.forRun(runId))),
    });
    const { signer } = options;
    this.sign = (unsigned) => signDecision(unsigned, signer);
    this.signRelease = (unsigned) => signRelease(unsigned, signer);
    this.editWindow = new EditWindow(
      this.redis,
      this.keys,
      (agent) => this.config.editWindowMs[agent] ?? DEFAULT_EDIT_WINDOW_MS,
    );
    this.outbox = new Outbox({
      redis: this.redis,
      keys: this.keys,
      ...(options.deliver === undefined ? {} : { deliver: options.deliver }),
      onError: this.onError,
    });
  }

  /**
   * Adds a listener for every commit that changes what people see of a run — each use case's and each
   * step outcome an agent reports — after the `onCommitted` listeners (the render queue listens here).
   */
  onChanged(listener: ChangeListener): void {
    this.changeListeners.push(listener);
  }

  /** Adds a listener for committed results; returns a function that removes it. */
  onCommitted(listener: CommittedListener): () => void {
    this.listeners.push(listener);
    return () => {
      const index = this.listeners.indexOf(listener);
      if (index >= 0) this.listeners.splice(index, 1);
    };
  }

  /**
   * Stores v1 of a run from a verified submission (see use-cases/submit-plan.ts). A retried submission
   * of a pending run also restores its index entries, which a crash right after the commit can miss.
   */
  async submitPlan(input: SubmitPlanInput): Promise<UseCaseResult> {
    // The hooks run once, before the attempts (hook-gathering.ts). A submission nearly always creates
    // its run: decide without reading first (saves a round trip).
    const hooks = await this.hooks.submission(input.raw);
    const result = await this.run(input.runId, (ctx, snapshot) => submitPlan(ctx, snapshot, input), {
      expectAbsent: true,
      hooks,
    });
    if (result.kind === 'duplicate' && result.run.status === 'pending') {
      await Promise.all([
        this.redis.zadd(this.keys.runs, result.run.createdAt, input.runId),
        this.redis.zadd(this.keys.pending, Date.parse(result.run.current.plan.expiresAt), input.runId),
      ]);
    }
    return result;
  }

  /** One person approves every step of the current version they may approve (use-cases/approve.ts). */
  async approve(input: ApproveInput, options: PublishOptions = {}): Promise<UseCaseResult> {
    const hooks = await this.hooks.approval(input);
    return this.run(input.runId, (ctx, snapshot) => approve(ctx, snapshot, input), { ...options, hooks });
  }

  /** Rejects the run (use-cases/reject.ts). */
  reject(input: RejectInput, options: PublishOptions = {}): Promise<UseCaseResult> {
    return this.run(input.runId, (ctx, snapshot) => reject(ctx, snapshot, input), options);
  }

  /** An edit: a new, untrusted plan that becomes version n+1 if it passes (use-cases/edit.ts). */
  async applyEdit(input: EditInput, options: PublishOptions = {}): Promise<UseCaseResult> {
    const hooks = await this.hooks.edit(input);
    return this.run(input.runId, (ctx, snapshot) => applyEdit(ctx, snapshot, input), { ...options, hooks });
  }

  /**
   * The diff message's partial keeps, each producing a new version from the edit shown: remove a step
   * the edit added, revert a step it changed, or discard the whole edit (use-cases/edit.ts).
   */
  async applyDiffAction(input: DiffActionInput): Promise<UseCaseResult> {
    const edited = await this.getVersion(input.runId, input.version);
    const base =
      edited?.baseVersion === undefined ? undefined : await this.getVersion(input.runId, edited.baseVersion);
    const versions = { ...(edited === undefined ? {} : { edited }), ...(base === undefined ? {} : { base }) };
    const hooks = await this.hooks.diffAction(input, versions);
    return this.run(input.runId, (ctx, snapshot) => applyDiffAction(ctx, snapshot, input, versions), {
      hooks,
    });
  }

  /** The expiry timer of `version` (use-cases/timers.ts). */
  expire(input: TimerInput): Promise<UseCaseResult> {
    return this.run(input.runId, (ctx, snapshot) => expire(ctx, snapshot, input));
  }

  /** An escalation level (or one of its re-notifications) fired for `version`. */
  escalate(input: EscalateInput): Promise<UseCaseResult> {
    return this.run(input.runId, (ctx, snapshot) => escalate(ctx, snapshot, input));
  }

  /** The reminder before the first escalation level fired for `version`. */
  remind(input: ChainTimerInput): Promise<UseCaseResult> {
    return this.run(input.runId, (ctx, snapshot) => remind(ctx, snapshot, input));
  }

  /** Records where the run's card is (posted once, updated in place for later versions). */
  async recordPosted(input: PostedInput): Promise<number | undefined> {
    const { revision } = await this.commit(
      input.runId,
      (ctx, snapshot) => recordPosted(ctx, snapshot, input),
      {
        quiet: true,
      },
    );
    return revision;
  }

  /** The agent reports a step's outcome; see `recordOutcome` in outcomes.ts. */
  async recordOutcome(input: Parameters<typeof recordOutcome>[2]): Promise<OutcomeResult> {
    // Marked before the commit, like every change people see: the card shows outcomes.
    await this.redis.zadd(this.keys.changed, await this.now(), input.runId);
    const options = this.outcomeOptions();
    const hooks = await this.hooks.outcome(input);
    const { result, revision } = await recordOutcome(this.redis, this.keys, input, {
      ...options,
      // An `applied` report releases the steps that were waiting only for it, in its own commit.
      afterApplied: (commit, state, now) => {
        releaseReady(
          { config: this.config, keys: this.keys, now, signRelease: this.signRelease, hooks },
          commit,
          state,
        );
      },
    });
    if (revision !== undefined) {
      // A claim the agent never finishes turns `uncertain` by time alone: the card is drawn again then.
      const showAgainAt =
        result.kind === 'recorded' && result.outcome.status === 'applying'
          ? result.outcome.at + options.uncertainAfterMs + UNCERTAIN_MARGIN_MS
          : undefined;
      await this.announceChange({
        runId: input.runId,
        revision,
        ...(showAgainAt === undefined ? {} : { showAgainAt }),
      });
    }
    return result;
  }

  /**
   * Whether `userId` may open the reject form on `runId` at `version`; if not, the answer to show —
   * unknown, decided, expired (the click expires the run, as every click does), stale, or no step
   * they may speak for. `reject` decides again when the form comes back.
   */
  mayReject(input: { runId: string; version: number; userId: string }): Promise<ClickAnswer> {
    return this.checkClick(input, (state) => rejectRights(this.config, state, input.userId));
  }

  /** The same for the edit form: may `userId` edit this version at all (what they may write is the form's). */
  mayEdit(input: { runId: string; version: number; userId: string }): Promise<ClickAnswer> {
    return this.checkClick(input, (state) => editRights(this.config, state, input.userId));
  }

  /** Whether `userId` may approve anything on the current version (for the button's confirm text). */
  async mayApprove(input: { runId: string; version: number; userId: string }): Promise<ClickAnswer> {
    return this.checkClick(input, (state) => approveRights(this.config, state, input.userId));
  }

  /** Waits for deferred listeners to finish (before closing connections). */
  async drain(): Promise<void> {
    while (this.deferred.size > 0) await Promise.allSettled([...this.deferred]);
  }

  /**
   * Clears the run's `changed` mark once Slack shows `revision` — unless a later commit marked it
   * again meanwhile (its score is then newer than `markedBy`).
   */
  async markShown(runId: string, markedBy: number): Promise<void> {
    await this.redis.eval(CLEAR_IF_NOT_NEWER, 1, this.keys.changed, runId, String(markedBy));
  }

  /** The outbox sweep: delivers decisions committed but not confirmed delivered. Returns how many. */
  redeliverUndelivered(): Promise<number> {
    return this.outbox.sweep();
  }

  /** The guard's answer to a click that opens a form, expiring an overdue run as every click does. */
  private async checkClick(
    input: { runId: string; version: number },
    rights: (state: RunState) => { readonly ok: true } | { readonly ok: false; readonly reason: string },
  ): Promise<ClickAnswer> {
    const { snapshot, redisNow } = await loadRunAt(this.redis, this.keys.forRun(input.runId));
    const now = this.time === 'redis' ? redisNow : this.time();
    const check = checkAction(this.config, snapshot, input, now);
    switch (check.kind) {
      case 'closed':
        return { ok: false, refusal: check.answer };
      case 'expired':
        return {
          ok: false,
          refusal: await this.expire({ runId: input.runId, version: check.state.current.version }),
        };
      case 'stale':
        return {
          ok: false,
          refusal: {
            kind: 'stale',
            run: projectRun(this.config, input.runId, check.state),
            currentVersion: check.currentVersion,
          },
        };
      case 'open': {
        const run = projectRun(this.config, input.runId, check.state);
        const allowed = rights(check.state);
        return allowed.ok
          ? { ok: true, run }
          : { ok: false, refusal: { kind: 'unauthorized', run, reason: allowed.reason } };
      }
    }
  }

  /**
   * Runs one use case in the commit loop. After a commit: the cross-run indexes, the decision's
   * delivery, then the listeners (see `PublishOptions`); none of them can undo the commit.
   */
  private async run<R>(
    runId: string,
    useCase: (ctx: UseCaseContext, snapshot: RunSnapshot) => Attempt<R>,
    options: RunOptions = {},
  ): Promise<R> {
    return (await this.commit(runId, useCase, options)).result;
  }

  /** `run`, also answering the revision it committed (undefined when nothing was committed). */
  private async commit<R>(
    runId: string,
    useCase: (ctx: UseCaseContext, snapshot: RunSnapshot) => Attempt<R>,
    options: RunOptions = {},
  ): Promise<{ readonly result: R; readonly revision?: number }> {
    let held = false;
    const { attempt, snapshot, now, committed, revision } = await commitLoop(
      this.redis,
      this.keys.forRun(runId),
      this.time,
      (read, at) =>
        useCase(
          {
            config: this.config,
            keys: this.keys,
            now: at,
            sign: this.sign,
            signRelease: this.signRelease,
            hooks: options.hooks,
          },
          read,
        ),
      async (pending, at) => {
        // Into the outboxes before the commit, so a crash right after it still gets the decision
        // delivered and Slack brought up to date (the repair loop finds the run in `changed`).
        const marks: Promise<unknown>[] = [];
        if (pending.decision !== undefined) {
          held = true;
          marks.push(this.outbox.hold(runId, at));
        }
        if (!options.quiet) marks.push(this.redis.zadd(this.keys.changed, at, runId));
        await Promise.all(marks);
      },
      options,
    );
    // An attempt that held the outbox lost its race to a commit that decided the run: its hold may have
    // landed after the winner's delivery took the run out, and is taken back once that delivery is done.
    if (held && (attempt as Attempt<R>).decision === undefined) await this.outbox.release(runId);
    if (!committed || revision === undefined) return { result: attempt.result };
    await this.afterCommit(runId, snapshot, attempt as Attempt<R & UseCaseResult>, now);
    if (options.quiet) return { result: attempt.result, revision };
    const result = attempt.result as UseCaseResult;
    const commit = { runId, revision };
    if (!options.deferPublish) {
      await this.publish(result, commit);
      return { result: attempt.result, revision };
    }
    const running = this.publish(result, commit)
      .catch((error: unknown) => this.onError(error, `showing the committed ${result.kind}`, { runId }))
      .finally(() => this.deferred.delete(running));
    this.deferred.add(running);
    return { result: attempt.result, revision };
  }

  private async afterCommit(
    runId: string,
    snapshot: RunSnapshot,
    attempt: Attempt<UseCaseResult>,
    now: number,
  ): Promise<void> {
    const result = attempt.result;
    // Cross-run indexes live outside the run's hash slot, so they are written after the commit, sent
    // together (one round trip, no MULTI: each write is idempotent and boot-time reconciliation and the
    // outbox sweep tolerate a crash between them); a MULTI costs more CPU than the writes themselves.
    const created = snapshot.fields === undefined;
    const writes: Promise<unknown>[] = [];
    if (created) writes.push(this.redis.zadd(this.keys.runs, now, runId));
    if (created && result?.kind === 'pending') {
      writes.push(this.redis.zadd(this.keys.pending, Date.parse(result.run.current.plan.expiresAt), runId));
    }
    if (attempt.decision !== undefined) writes.push(this.redis.zrem(this.keys.pending, runId));
    if (created && (result?.kind === 'pending' || result?.kind === 'approved'))
      writes.push(this.editWindow.submitted(result.run.agent, runId, now));
    if (result?.kind === 'edited') writes.push(this.recordEdited(result.run));
    await Promise.all(writes);
    if (attempt.decision !== undefined) await this.outbox.deliver(attempt.decision);
  }

  /** An edit's effect on the agent's edit window: steps touched since the agent's own plan (v1). */
  private async recordEdited(run: RunView): Promise<void> {
    const first = await this.getVersion(run.runId, 1);
    if (first === undefined) return;
    await this.editWindow.edited(
      run.agent,
      run.runId,
      run.createdAt,
      touchedSince(first.plan, run.current.plan),
    );
  }

  /** Every listener sees the result, in order; the first failure is thrown once all have run. */
  private async publish(
    result: UseCaseResult,
    commit: { readonly runId: string; readonly revision: number },
  ): Promise<void> {
    let failure: { error: unknown } | undefined;
    for (const listener of this.listeners) {
      try {
        await listener(result, commit);
      } catch (error) {
        failure ??= { error };
      }
    }
    try {
      await this.announceChange(commit);
    } catch (error) {
      failure ??= { error };
    }
    if (failure !== undefined) throw failure.error;
  }

  private async announceChange(commit: Parameters<ChangeListener>[0]): Promise<void> {
    for (const listener of this.changeListeners) await listener(commit);
  }
}
