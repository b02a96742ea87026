/**
 * The `render` queue: Slack is brought up to date with each committed run state here, at Slack's pace,
 * so no commit — an intake, a timer, a click — ever waits on Slack.
 *
 * Inputs: job data `{ runId, revision }`, one job per committed revision (`render-<run>-r<rev>`), added
 * by the approvals service's listener after the commit; the repair loop adds jobs for runs still
 * marked `changed` (a process that died before adding the job); a delayed job (`render-<run>-at<ms>`)
 * for what changes with time alone — a step claimed `applying` and never finished turns `uncertain`. Outputs: `render(runId)`, which reads
 * the run as it is *now* and converges every message (src/bot/renderer.ts). Jobs of one run never run
 * at once: each takes the run's render lock first and otherwise comes back 250 ms later; the newest
 * state is rendered by whichever job runs, so a burst of revisions costs a rendering or two, not one
 * each. Idempotency: rendering is state-driven; a job retried after a fault renders the same state.
 * A Slack fault is retried with backoff by BullMQ (10 attempts from 1 s), then the repair loop tries
 * again later.
 */
import { randomUUID } from 'node:crypto';
import { DelayedError, type Job, type JobsOptions, Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import type { ErrorReporter, Logger } from '../log.ts';
import { bullPrefix, RENDER_QUEUE, renderAtJobId, renderJobId, repairJobId } from './names.ts';
import { CRASH_RECOVERY, reportToStderr, type SupervisedWorker, supervise } from './supervised-worker.ts';

export const RENDER_JOB_OPTIONS = {
  attempts: 10,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: true,
  removeOnFail: { age: 7 * 24 * 3600 },
} as const satisfies JobsOptions;

/**
 * Renderings at once. A rendering mostly waits (on Redis, then on Slack), so 8 at once was the
 * bottleneck of submit → card at 50 plans/s: alternating quick end_to_end runs on the same loaded
 * machine, p50 586–920 ms and p99 873–1,288 ms at 8 against 130–228 and 480–519 ms at 32. Slack's
 * rate limits are kept by the gateway (one call at a time per limited method), not by this number.
 */
export const RENDER_CONCURRENCY = 32;

/** The run's render lock lapses this long after its holder stops renewing it (a process that died). */
const LOCK_MS = 8_000;
const RENEW_EVERY_MS = 2_000;
const RETRY_LOCKED_MS = 250;

export interface RenderQueue {
  /** Asks for the run to be rendered at (or past) `revision`. */
  enqueue(runId: string, revision: number): Promise<void>;
  /**
   * Asks for a rendering of the run at `at` (ms since the epoch, the `clock` given), whatever Slack
   * shows by then: for what changes with time alone (a claimed step turning `uncertain`). One job per
   * run and instant.
   */
  enqueueAt(runId: string, at: number): Promise<void>;
  /**
   * Asks for a rendering of a run Slack may not show (the repair loop): one such job per run at a
   * time, whatever became of the run's earlier jobs (a job that failed for good is kept, under its id).
   */
  repair(runId: string): Promise<void>;
  close(): Promise<void>;
}

export function createRenderQueue(options: {
  readonly connection: Redis;
  readonly prefix?: string;
  /** The queue's connection errors (default: a line on stderr). */
  readonly onError?: ErrorReporter;
  /** Debug lines for jobs done. */
  readonly logger?: Logger;
  /** For delays (`enqueueAt`); default this process's clock. */
  readonly clock?: () => number;
}): RenderQueue {
  const clock = options.clock ?? Date.now;
  const queue = new Queue(RENDER_QUEUE, {
    connection: options.connection,
    prefix: bullPrefix(options.prefix ?? 'cs'),
  });
  queue.on('error', (error) => (options.onError ?? reportToStderr)(error, 'the render queue'));
  return {
    async enqueue(runId, revision) {
      await queue.add(
        'render',
        { runId, revision },
        { ...RENDER_JOB_OPTIONS, jobId: renderJobId(runId, revision) },
      );
    },
    async enqueueAt(runId, at) {
      // A revision past any real one: the job renders even though no commit marked the run.
      await queue.add(
        'render',
        { runId, revision: Number.MAX_SAFE_INTEGER },
        { ...RENDER_JOB_OPTIONS, jobId: renderAtJobId(runId, at), delay: Math.max(0, at - clock()) },
      );
    },
    async repair(runId) {
      // A failed repair job is removed, not kept, so the next pass can add it again.
      await queue.add(
        'render',
        { runId, revision: 0 },
        { ...RENDER_JOB_OPTIONS, removeOnFail: true, jobId: repairJobId(runId) },
      );
    },
    close: () => queue.close(),
  };
}

export interface RenderWorkerOptions {
  /** A worker-role connection (`maxRetriesPerRequest: null`). */
  readonly connection: Redis;
  /** A client connection for the per-run render locks. */
  readonly redis: Redis;
  readonly prefix?: string;
  /** The run's lock key (under its hash tag). */
  readonly lockKey: (runId: string) => string;
  /** Brings Slack up to the run's current state (the Renderer's `converge`); `revision` is the job's. */
  readonly render: (runId: string, revision: number) => Promise<void>;
  /** Renderings at once, across runs (default `RENDER_CONCURRENCY`). */
  readonly concurrency?: number;
  /** Worker errors and failed jobs, with the job's id and run (default: a line on stderr). */
  readonly onError?: ErrorReporter;
  /** Debug lines for jobs done. */
  readonly logger?: Logger;
}

const jobData = z.object({ runId: z.string(), revision: z.number() });

export function startRenderWorker(options: RenderWorkerOptions): SupervisedWorker<Worker> {
  const worker = new Worker(
    RENDER_QUEUE,
    async (job: Job, token?: string) => {
      const { runId, revision } = jobData.parse(job.data);
      const key = options.lockKey(runId);
      const owner = randomUUID();
      const locked = await options.redis.set(key, owner, 'PX', LOCK_MS, 'NX');
      if (locked !== 'OK') {
        // Another job of this run is rendering: come back after it (it may have read an older state).
        await job.moveToDelayed(Date.now() + RETRY_LOCKED_MS, token);
        throw new DelayedError();
      }
      const renew = setInterval(() => {
        options.redis.eval(RENEW, 1, key, owner, String(LOCK_MS)).catch(() => {});
      }, RENEW_EVERY_MS);
      try {
        await options.render(runId, revision);
      } finally {
        clearInterval(renew);
        await options.redis.eval(RELEASE, 1, key, owner);
      }
    },
    {
      connection: options.connection,
      prefix: bullPrefix(options.prefix ?? 'cs'),
      concurrency: options.concurrency ?? RENDER_CONCURRENCY,
      ...CRASH_RECOVERY,
    },
  );
  return supervise(worker, 'render', options.onError, options.logger);
}

/** KEYS[1] the lock; ARGV[1] its owner; ARGV[2] ms. Extends only a lock this job still holds. */
const RENEW = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0`;
/** KEYS[1] the lock; ARGV[1] its owner. Releases only a lock this job still holds. */
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;
