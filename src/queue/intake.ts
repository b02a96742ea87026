/**
 * The `intake` processor: an agent's signed submission → a stored v1 (or a refusal).
 *
 * Inputs: job data = `SignedSubmission` (src/pipeline/submission.ts); `job.timestamp` = when it was
 * enqueued. Outputs: the approvals service stores the run (`submitPlan`); what follows a committed run
 * — its timers, its card, the decision of an invalid or all-auto plan — is the service's listeners'
 * and delivery's to do. Refusals — unknown agent, bad signature, replay, reused nonce — go to the
 * refusal log, post nothing, and complete the job: retrying cannot make them valid. Returns an
 * `IntakeSummary`. Malformed job data (no usable run id to log under) fails without retry;
 * infrastructure errors throw and BullMQ retries with backoff.
 *
 * Idempotency: a retry of the same job finds its own run id under the nonce and proceeds; the service
 * answers a second store of the same run with `duplicate`, for which `onDuplicate` asks for the card
 * and timers again (both idempotent per version), so a crash between storing and posting still ends
 * with a card.
 */
import { type JobsOptions, UnrecoverableError } from 'bullmq';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import type { Keys } from '../approvals/keys.ts';
import type { RunView, UseCaseResult } from '../approvals/types.ts';
import { RUN_ID_PATTERN, type SignedSubmission, verifySubmission } from '../pipeline/index.ts';

/** The use case intake calls (the approvals service provides it). */
export interface IntakeUseCases {
  submitPlan(input: { runId: string; agent: string; raw: string; nonce?: string }): Promise<UseCaseResult>;
}

/** Where refused submissions are recorded (`RefusalLog`). */
export interface RefusalSink {
  record(input: { runId: string; agent: string; reason: string }): Promise<void>;
}

/** A port called with a run that needs people: posts or reconciles its card (idempotent per version). */
export type RunPort = (run: RunView) => Promise<void>;

export interface IntakeDependencies {
  readonly service: IntakeUseCases;
  readonly refusals: RefusalSink;
  /** Shared connection for nonce records (no blocking commands). */
  readonly redis: Redis;
  readonly keys: Keys;
  /** Configured agent names. An agent missing here, or without a secret, is unknown. */
  readonly agents: Readonly<Record<string, unknown>>;
  readonly secrets: (agent: string) => string | undefined;
  /**
   * A retried submission whose run is still pending: makes sure its timers and its card exist (both
   * idempotent per version). Default: nothing.
   */
  readonly onDuplicate?: RunPort;
  /** How far `issuedAt` may be from the enqueue time (default 5 minutes). */
  readonly replayWindowMs?: number;
  /** How long a nonce is remembered (default 24 hours: far longer than any replay window). */
  readonly nonceTtlMs?: number;
}

export type RefusalReason =
  | 'unknown_agent'
  | 'bad_signature'
  | 'bad_nonce'
  | 'replay'
  | 'clock_skew'
  | 'nonce_reused';

/** What one intake job came to; the job's return value. */
export type IntakeSummary =
  | { readonly kind: 'refused'; readonly runId: string; readonly reason: RefusalReason }
  | { readonly kind: UseCaseResult['kind']; readonly runId: string; readonly version?: number };

/** The part of a BullMQ job intake reads. */
export interface IntakeJob {
  readonly data: unknown;
  /** When the job was enqueued (ms since epoch). */
  readonly timestamp: number;
}

/**
 * Options every intake job is added with. Infrastructure faults are retried with backoff; a completed
 * job is kept an hour, long enough to absorb a client's retries of the same submission (the
 * service's `duplicate` answer covers the rest), short enough not to hold plan text for long.
 */
export const INTAKE_JOB_OPTIONS = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: { age: 3600, count: 10_000 },
  removeOnFail: { age: 7 * 24 * 3600 },
} as const satisfies JobsOptions;

export const REPLAY_WINDOW_MS = 5 * 60_000;
const NONCE_TTL_MS = 24 * 3_600_000;
/** Nonces become part of a Redis key: UUIDs and similar, never `:`, `{` or spaces. */
const NONCE_PATTERN = /^[A-Za-z0-9_-]{8,128}$/;

// Only the run id must be well formed before we can answer at all (refusals are journaled under it);
// everything else is checked below and refused with a reason.
const submissionSchema = z.object({
  body: z.object({
    agent: z.string().max(256),
    runId: z.string().regex(RUN_ID_PATTERN),
    nonce: z.string().max(256),
    issuedAt: z.number(),
    plan: z.string(),
  }),
  signature: z.string().max(256),
});

/**
 * Builds the intake processor.
 * @example
 * new Worker(INTAKE_QUEUE, createIntakeProcessor({ service, redis, keys, agents: config.agents, secrets }), opts);
 */
export function createIntakeProcessor(deps: IntakeDependencies): (job: IntakeJob) => Promise<IntakeSummary> {
  const replayWindowMs = deps.replayWindowMs ?? REPLAY_WINDOW_MS;
  const nonceTtlMs = deps.nonceTtlMs ?? NONCE_TTL_MS;
  const onDuplicate = deps.onDuplicate ?? (async () => {});

  return async (job) => {
    const parsed = submissionSchema.safeParse(job.data);
    if (!parsed.success) {
      throw new UnrecoverableError(
        `intake job data is not a signed submission: ${z.prettifyError(parsed.error)}`,
      );
    }
    const submission: SignedSubmission = parsed.data;
    const { agent, runId, nonce, issuedAt } = submission.body;

    const reason = await refusalReason(submission, job.timestamp);
    if (reason !== undefined) {
      await deps.refusals.record({ runId, agent, reason });
      return { kind: 'refused', runId, reason };
    }

    const result = await deps.service.submitPlan({ runId, agent, raw: submission.body.plan, nonce });
    if (result.kind === 'duplicate' && result.run.status === 'pending') await onDuplicate(result.run);
    const version = 'run' in result && result.run !== undefined ? result.run.version : undefined;
    return { kind: result.kind, runId, ...(version === undefined ? {} : { version }) };

    async function refusalReason(
      signed: SignedSubmission,
      enqueuedAt: number,
    ): Promise<RefusalReason | undefined> {
      // Own properties only: an agent named `constructor` must not find Object.prototype's.
      const secret = Object.hasOwn(deps.agents, agent) ? deps.secrets(agent) : undefined;
      if (secret === undefined) return 'unknown_agent';
      if (!verifySubmission(signed, secret)) return 'bad_signature';
      if (!NONCE_PATTERN.test(nonce)) return 'bad_nonce';
      // Measured against the enqueue time, not now: a backlog or a retry must not turn into a refusal.
      if (enqueuedAt - issuedAt > replayWindowMs) return 'replay';
      if (issuedAt - enqueuedAt > replayWindowMs) return 'clock_skew';
      const key = deps.keys.nonce(agent, nonce);
      const claimed = await deps.redis.set(key, runId, 'PX', nonceTtlMs, 'NX');
      // Taken already: by this very job on an earlier attempt (same run id), or by another submission.
      const holder = claimed === 'OK' ? runId : await deps.redis.get(key);
      return holder === null || holder === runId ? undefined : 'nonce_reused';
    }
  };
}
