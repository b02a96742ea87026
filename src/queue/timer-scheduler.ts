import { type JobsOptions, Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { ChainStep } from '../approvals/escalation.ts';
import type { RunView, UseCaseResult } from '../approvals/types.ts';
import type { EscalationPolicy } from '../config/define-config.ts';
import type { ErrorReporter } from '../log.ts';
import { bullPrefix, TIMERS_QUEUE } from './names.ts';
import { reportToStderr } from './supervised-worker.ts';
import {
  chainJobAfter,
  expiryJob,
  nextChainJob,
  type TimerJobData,
  type TimerJobSpec,
  timerJobIds,
} from './timer-plan.ts';

/**
 * Options of every timer job. Processing faults (Redis, Slack) are retried with backoff; a finished
 * job is removed at once — a chain's progress is recorded on the run by the step that fired, not read
 * from kept jobs — and a failed one is kept a week for inspection (`reconcile` retries it on boot).
 */
export const TIMER_JOB_OPTIONS = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: true,
  removeOnFail: { age: 7 * 24 * 3600 },
} as const satisfies JobsOptions;

export interface TimerSchedulerOptions {
  /** A client-role connection (the scheduler only adds and removes jobs). */
  readonly connection: Redis;
  /** Countersign key prefix (default `cs`). */
  readonly prefix?: string;
  /** Escalation policy per agent (`config.escalation`). */
  readonly escalation: Readonly<Record<string, EscalationPolicy>>;
  /**
   * Redis's time, estimated (ms; default `Date.now`): a job's delay is its due time less this, so it
   * comes due on time by the clock of the worker that added it, whatever that clock says.
   */
  readonly clock?: () => number;
  /** The queue's connection errors (default: a line on stderr). */
  readonly onError?: ErrorReporter;
}

/**
 * Puts a run's timers on the `timers` queue as delayed jobs and takes them off again (docs/architecture.md §8):
 * at any time a pending run holds its version's expiry job and the next step of that version's
 * escalation chain. Every operation is idempotent: job ids are deterministic, and BullMQ ignores an
 * add whose id exists.
 * @example
 * const timers = new TimerScheduler({ connection: redis, escalation: config.escalation });
 * approvals.onCommitted((result) => timers.onCommitted(result));
 */
export class TimerScheduler {
  readonly queue: Queue<TimerJobData>;
  private readonly redis: Redis;
  private readonly escalation: Readonly<Record<string, EscalationPolicy>>;
  private readonly clock: () => number;

  constructor(options: TimerSchedulerOptions) {
    this.queue = new Queue<TimerJobData>(TIMERS_QUEUE, {
      connection: options.connection,
      prefix: bullPrefix(options.prefix ?? 'cs'),
    });
    this.queue.on('error', (error) => (options.onError ?? reportToStderr)(error, 'the timers queue'));
    this.redis = options.connection;
    this.escalation = options.escalation;
    this.clock = options.clock ?? Date.now;
  }

  /**
   * Ensures a pending run's current version has its expiry job and the next step of its escalation
   * chain (after the last step that fired). For a new run, after an edit, for a retried submission,
   * and at boot.
   */
  async schedule(run: RunView): Promise<void> {
    if (run.status !== 'pending') return;
    await this.add(await this.due(run));
  }

  /** The chain step after `step`, which just fired for the run's current version; nothing after the last. */
  async scheduleAfter(run: RunView, step: ChainStep): Promise<void> {
    if (run.status !== 'pending') return;
    const next = chainJobAfter(this.escalation[run.agent], run, step);
    if (next !== undefined) await this.add([next]);
  }

  /**
   * After an edit: the new version's expiry (same `expiresAt`) and escalation clock start, then every
   * older version's timers are removed. Added before removing, so a crash in between leaves a
   * timer too many (a journaled no-op when it fires), never none.
   */
  async reschedule(run: RunView): Promise<void> {
    await this.schedule(run);
    if (run.version > 1) await this.remove(run.runId, run.agent, 1, run.version - 1);
  }

  /** A decided run: every timer of every version is removed. Returns how many jobs were removed. */
  cancel(run: Pick<RunView, 'runId' | 'agent' | 'version'>): Promise<number> {
    return this.remove(run.runId, run.agent, 1, run.version);
  }

  /**
   * What a committed result means for the timers: a new run gets its timers, an edit restarts the
   * clock, a step that fired schedules the next, a decision stops the chain.
   */
  async onCommitted(result: UseCaseResult): Promise<void> {
    switch (result.kind) {
      case 'pending':
        await this.schedule(result.run);
        return;
      case 'edited':
        await this.reschedule(result.run);
        return;
      case 'escalated':
        await this.scheduleAfter(result.run, result.step);
        return;
      case 'reminded':
        await this.scheduleAfter(result.run, { kind: 'remind' });
        return;
      case 'approved':
      case 'rejected':
      case 'expired':
        await this.cancel(result.run);
        return;
      default:
        return;
    }
  }

  /**
   * Boot-time variant of `reschedule`: also retries the run's timer if it failed for good earlier (a job
   * left failed keeps its id, so adding it again would do nothing), and removes older versions' timers
   * left by a crash between an edit and its rescheduling.
   */
  async ensure(run: RunView): Promise<void> {
    if (run.status !== 'pending') return;
    const jobs = await this.due(run);
    for (const job of jobs) {
      if ((await this.queue.getJobState(job.id)) === 'failed')
        await (await this.queue.getJob(job.id))?.retry();
    }
    await this.add(jobs);
    if (run.version > 1) await this.remove(run.runId, run.agent, 1, run.version - 1);
  }

  /** Closes the queue (not the connection, which the caller owns). */
  close(): Promise<void> {
    return this.queue.close();
  }

  private async due(run: RunView): Promise<TimerJobSpec[]> {
    const next = nextChainJob(this.escalation[run.agent], run);
    return [expiryJob(run), ...(next === undefined ? [] : [next])];
  }

  private async add(jobs: readonly TimerJobSpec[]): Promise<void> {
    const now = this.clock();
    await this.queue.addBulk(
      jobs.map((job) => ({
        name: job.data.kind,
        data: job.data,
        opts: { ...TIMER_JOB_OPTIONS, jobId: job.id, delay: Math.max(0, job.dueAt - now) },
      })),
    );
  }

  private async remove(runId: string, agent: string, from: number, through: number): Promise<number> {
    const ids = timerJobIds(runId, this.escalation[agent], from, through);
    // Most candidate ids were never added or are gone already, and BullMQ's removal script scans the
    // queue's wait and active lists for a job it cannot find: only jobs that exist are handed to it.
    // The EXISTS go out together (one round trip) as plain commands: an ioredis pipeline on a
    // connection BullMQ has loaded its scripts into copies every script per pipeline. A job added in
    // between is a stale no-op when it fires.
    const found = await Promise.all(ids.map((id) => this.redis.exists(this.queue.toKey(id))));
    const present = ids.filter((_, index) => found[index] === 1);
    // An active job cannot be removed (BullMQ answers 0); it is removed when it completes.
    const removed = await Promise.all(present.map((id) => this.queue.remove(id)));
    return removed.filter((code) => code === 1).length;
  }
}
