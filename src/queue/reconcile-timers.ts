import type { RunView, UseCaseResult } from '../approvals/types.ts';

export interface ReconcileDependencies {
  readonly service: {
    pendingRuns(): Promise<{ runId: string; expiresAt: number }[]>;
    getRun(runId: string): Promise<RunView | undefined>;
    expire(input: { runId: string; version: number }): Promise<UseCaseResult>;
  };
  /** `TimerScheduler.ensure`: the expiry job and the next chain step of the run's current version. */
  readonly ensure: (run: RunView) => Promise<void>;
  /** Redis's time, estimated (ms; default `Date.now`): which runs look overdue. */
  readonly clock?: () => number;
  /** Runs handled at once (default 16). */
  readonly concurrency?: number;
  /** Checked between runs: stop early when the process is shutting down. */
  readonly stopped?: () => boolean;
  /** One run failed; reconciliation goes on with the others (default `console.error`). */
  readonly onError?: (error: unknown, runId: string) => void;
}

export interface ReconcileSummary {
  /** Pending runs looked at. */
  readonly checked: number;
  /** Of those, expired here because `expiresAt` had passed (the timer had not fired yet). */
  readonly expired: number;
  readonly failed: number;
}

/**
 * Boot-time reconciliation (docs/architecture.md §8): timers are durable BullMQ jobs, but a process can die
 * between a commit and scheduling (an edit's new clock), or a job can end up failed. For every pending
 * run: past `expiresAt` → expire it now (the service decides exactly once even if the timer fires at
 * the same moment, and its listeners show it; it decides by Redis's time, and a run it finds not due
 * yet keeps its timers); otherwise make sure its version's expiry job and next escalation step
 * exist. Idempotent: deterministic job ids make a second pass add nothing.
 * @example await reconcileTimers({ service: approvals, ensure: (run) => scheduler.ensure(run) });
 */
export async function reconcileTimers(deps: ReconcileDependencies): Promise<ReconcileSummary> {
  const clock = deps.clock ?? Date.now;
  const onError =
    deps.onError ??
    ((error: unknown, runId: string) =>
      console.error(`countersign: reconciling timers of run ${runId}:`, error));
  const pending = await deps.service.pendingRuns();
  let next = 0;
  let checked = 0;
  let expired = 0;
  let failed = 0;

  const one = async (runId: string): Promise<void> => {
    const run = await deps.service.getRun(runId);
    // Decided since the index was read, or an index entry left by a crash after the decision.
    if (run === undefined || run.status !== 'pending') return;
    if (clock() >= Date.parse(run.current.plan.expiresAt)) {
      const result = await deps.service.expire({ runId, version: run.version });
      if (result.kind === 'expired') expired++;
      // Not due by Redis's time after all (this process's clock runs fast): it keeps its timers.
      if (result.kind === 'pending') await deps.ensure(result.run);
      return;
    }
    await deps.ensure(run);
  };
  const lane = async (): Promise<void> => {
    while (next < pending.length && !(deps.stopped?.() ?? false)) {
      const entry = pending[next++];
      if (entry === undefined) break;
      checked++;
      try {
        await one(entry.runId);
      } catch (error) {
        failed++;
        onError(error, entry.runId);
      }
    }
  };
  await Promise.all(Array.from({ length: deps.concurrency ?? 16 }, lane));
  return { checked, expired, failed };
}

/** How long past its expiry a pending run is left to its timer before the sweep expires it. */
export const OVERDUE_GRACE_MS = 2_000;

/**
 * The expiry sweep (docs/architecture.md §15): pending runs past their expiry by more than
 * `OVERDUE_GRACE_MS` by Redis's time are expired here. Their timer is late or lost — BullMQ finds a
 * delayed job due by the clock of the worker that looks, so when every live replica's clock runs
 * behind the one that scheduled it, the job comes late by the difference. Idempotent: the service
 * decides each expiry exactly once, whoever asks. Returns how many it expired.
 */
export async function expireOverdue(deps: {
  readonly service: {
    now(): Promise<number>;
    overdueRuns(before: number): Promise<string[]>;
    getRun(runId: string): Promise<RunView | undefined>;
    expire(input: { runId: string; version: number }): Promise<UseCaseResult>;
  };
  readonly graceMs?: number;
  /** Checked between runs: a stopping process leaves the rest to the next sweep (any replica's). */
  readonly stopped?: () => boolean;
}): Promise<number> {
  const { service } = deps;
  const overdue = await service.overdueRuns((await service.now()) - (deps.graceMs ?? OVERDUE_GRACE_MS));
  let expired = 0;
  for (const runId of overdue) {
    if (deps.stopped?.() === true) break;
    const run = await service.getRun(runId);
    if (run === undefined || run.status !== 'pending') continue;
    if ((await service.expire({ runId, version: run.version })).kind === 'expired') expired++;
  }
  return expired;
}
