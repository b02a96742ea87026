import { randomUUID } from 'node:crypto';
import { type Job, Queue, UnrecoverableError, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import {
  createKeys,
  type Keys,
  type OutcomeResult,
  recordOutcome,
  type StepOutcome,
} from '../approvals/index.ts';
import {
  CountersignError,
  DEFAULT_LIMITS,
  type Decision,
  type JsonObject,
  type PlanLimits,
  RUN_ID_PATTERN,
  type StepVerification,
  signSubmission,
  verifyDecisionStep,
} from '../pipeline/index.ts';
import { createRedisConnection } from '../queue/connection.ts';
import { INTAKE_JOB_OPTIONS } from '../queue/intake.ts';
import { bullPrefix, decisionsQueue, INTAKE_QUEUE, intakeJobId } from '../queue/names.ts';
import { parseDecision } from './decision-schema.ts';
import { ClientClosedError, DecisionTimeoutError, SubmissionError } from './errors.ts';
import { buildPlanText, type SubmitInput } from './plan-input.ts';
import { createRunIdGenerator } from './run-id.ts';

type ConnectionChoice =
  | { readonly redisUrl: string; readonly connection?: never }
  /** Your own ioredis connection; the client leaves it open on `close()`. */
  | { readonly connection: Redis; readonly redisUrl?: never };

export type AgentClientOptions = ConnectionChoice & {
  /** The agent's name in the Countersign config. */
  readonly agent: string;
  /** The agent's HMAC secret: signs submissions and verifies decision receipts. */
  readonly secret: string;
  /** Countersign's key prefix (default `cs`). */
  readonly prefix?: string;
  /** Milliseconds since the epoch (default `Date.now`). */
  readonly clock?: () => number;
  /** Limits for the local checks in `submit` (default: the server's defaults). */
  readonly limits?: Partial<PlanLimits>;
  /** How often `waitForDecision` re-reads in case a notification was missed (default 2 s). */
  readonly pollIntervalMs?: number;
  /** A step reported `applying` this long without a result reads as `uncertain` (default 15 min, as the server's default). */
  readonly uncertainAfterMs?: number;
  /** Where background errors go (the decision consumer's connection, a failed handler). */
  readonly onError?: (error: unknown) => void;
};

export interface WaitOptions {
  /** Give up after this long with a `DecisionTimeoutError` (default 10 minutes). */
  readonly timeoutMs?: number;
}

/** What `reportOutcome` answers. `already_claimed`: another dispatch claimed the step; do not run it. */
export type OutcomeReport =
  | { readonly ok: true; readonly outcome: StepOutcome }
  | {
      readonly ok: false;
      readonly reason: Exclude<OutcomeResult['kind'], 'recorded'>;
      readonly message: string;
      readonly outcome?: StepOutcome;
    };

export type DecisionHandler = (decision: Decision) => Promise<void>;

interface Waiter {
  readonly check: () => void;
  readonly fail: (error: Error) => void;
}

const DEFAULT_TIMEOUT_MS = 10 * 60_000;

/**
 * What an agent imports to submit plans to Countersign and act on the decisions (docs/architecture.md §11).
 * Submissions are HMAC-signed with the agent's secret; decisions carry a receipt signed the same way,
 * which `verifyStep` checks right before each effect.
 * @example
 * const client = new AgentClient({ redisUrl: 'redis://127.0.0.1:6379', agent: 'freight-ops', secret });
 * const { runId } = await client.submit({ summary, context, steps, expiresIn: '2h' });
 * const decision = await client.waitForDecision(runId, { timeoutMs: 3_600_000 });
 * for (const step of decision.plan?.steps ?? []) {
 *   if (!client.verifyStep(decision, step).ok) break;
 *   if ((await client.reportOutcome(runId, step.id, { status: 'applying' })).ok) await run(step);
 * }
 */
export class AgentClient {
  readonly agent: string;
  readonly keys: Keys;
  private readonly secret: string;
  private readonly redis: Redis;
  private readonly ownsRedis: boolean;
  private readonly redisUrl: string | undefined;
  private readonly bullPrefix: string;
  private readonly clock: () => number;
  private readonly limits: PlanLimits;
  private readonly pollIntervalMs: number;
  private readonly onError: (error: unknown) => void;
  private readonly nextRunId: () => string;
  private readonly uncertainAfterMs: number;
  private intake: Queue | undefined;
  private subscriber: Promise<Redis> | undefined;
  private readonly waiters = new Map<string, Set<Waiter>>();
  private readonly consumers = new Set<{ worker: Worker; connection: Redis }>();
  private closed = false;

  constructor(options: AgentClientOptions) {
    if (typeof options.secret !== 'string' || options.secret.length === 0) {
      throw new CountersignError('invalid_argument', 'AgentClient needs the agent’s secret');
    }
    this.agent = options.agent;
    this.secret = options.secret;
    this.keys = createKeys(options.prefix);
    this.bullPrefix = bullPrefix(this.keys.prefix);
    if (options.connection !== undefined) {
      this.redis = options.connection;
      this.ownsRedis = false;
      this.redisUrl = undefined;
    } else {
      this.redis = createRedisConnection(options.redisUrl, {
        role: 'client',
        name: `countersign-agent:${options.agent}`,
      });
      this.ownsRedis = true;
      this.redisUrl = options.redisUrl;
    }
    this.clock = options.clock ?? Date.now;
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.pollIntervalMs = options.pollIntervalMs ?? 2000;
    this.onError = options.onError ?? ((error) => console.error('countersign client:', error));
    this.nextRunId = createRunIdGenerator(this.clock);
    this.uncertainAfterMs = options.uncertainAfterMs ?? 15 * 60_000;
  }

  /**
   * Checks the plan locally, signs it and queues it for intake. Throws `SubmissionError` (with
   * diagnostics) for a plan the server would refuse at parse time; tools, arguments and policy are
   * checked by the server, and an invalid plan comes back as an `invalid` decision.
   * @example const { runId } = await client.submit({ steps: [{ tool: 'add_note', args: { … } }], expiresIn: '2h' });
   */
  async submit(input: SubmitInput): Promise<{ runId: string }> {
    this.assertOpen();
    const now = this.clock();
    const runId = input.runId ?? this.nextRunId();
    const built = buildPlanText(input, { agent: this.agent, runId, now, limits: this.limits });
    if (!built.ok) throw new SubmissionError(built.diagnostics);
    const signed = signSubmission(
      { agent: this.agent, runId, nonce: randomUUID(), issuedAt: now, plan: built.text },
      this.secret,
    );
    this.intake ??= new Queue(INTAKE_QUEUE, { connection: this.redis, prefix: this.bullPrefix });
    await this.intake.add('submit', signed, { ...INTAKE_JOB_OPTIONS, jobId: intakeJobId(runId, built.text) });
    return { runId };
  }

  /** The run's decision if there is one yet (no waiting). */
  async getDecision(runId: string): Promise<Decision | undefined> {
    this.assertOpen();
    if (!RUN_ID_PATTERN.test(runId))
      throw new CountersignError('invalid_argument', `not a run id: ${JSON.stringify(runId)}`);
    const text = await this.redis.get(this.keys.forRun(runId).decision);
    return text === null ? undefined : parseDecision(text);
  }

  /**
   * Resolves with the run's decision, whether it was made before or after this call: reads it, then
   * waits for the service's notification, re-reading every `pollIntervalMs` in case one is missed.
   * Rejects with `DecisionTimeoutError` after `timeoutMs`.
   */
  async waitForDecision(runId: string, options: WaitOptions = {}): Promise<Decision> {
    const existing = await this.getDecision(runId);
    if (existing !== undefined) return existing;
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    return new Promise<Decision>((resolve, reject) => {
      let settled = false;
      let reading = false;
      const settle = (finish: () => void): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timeout);
        clearInterval(poll);
        const set = this.waiters.get(runId);
        set?.delete(waiter);
        if (set?.size === 0) this.waiters.delete(runId);
        finish();
      };
      const check = (): void => {
        if (settled || reading) return;
        reading = true;
        this.getDecision(runId)
          .then((decision) => {
            if (decision !== undefined) settle(() => resolve(decision));
          })
          .catch((error: unknown) => settle(() => reject(error)))
          .finally(() => {
            reading = false;
          });
      };
      const waiter: Waiter = { check, fail: (error) => settle(() => reject(error)) };
      const timeout = setTimeout(
        () => settle(() => reject(new DecisionTimeoutError(runId, timeoutMs))),
        timeoutMs,
      );
      const poll = setInterval(check, this.pollIntervalMs);
      const set = this.waiters.get(runId) ?? new Set<Waiter>();
      set.add(waiter);
      this.waiters.set(runId, set);
      // Once subscribed, read again: a decision committed between the first read and the subscription
      // published its notification to nobody.
      this.subscribe().then(check, (error: unknown) => this.onError(error));
    });
  }

  /**
   * Consumes this agent's decisions durably: a BullMQ worker on `decisions-<agent>`. At least once —
   * a handler that throws (or a process that dies) gets the decision again — so make the handler
   * idempotent; `reportOutcome(…, 'applying')` claims each step exactly once. Returns `stop`.
   * @example const stop = client.onDecision(async (decision) => { await execute(decision); });
   */
  onDecision(handler: DecisionHandler, options: { readonly concurrency?: number } = {}): () => Promise<void> {
    this.assertOpen();
    const connection =
      this.redisUrl === undefined
        ? this.redis.duplicate({ maxRetriesPerRequest: null })
        : createRedisConnection(this.redisUrl, {
            role: 'worker',
            name: `countersign-agent:${this.agent}:decisions`,
          });
    const worker = new Worker(
      decisionsQueue(this.agent),
      async (job: Job) => {
        let decision: Decision;
        try {
          decision = parseDecision(job.data);
        } catch (error) {
          throw new UnrecoverableError(
            `not a decision: ${error instanceof Error ? error.message : String(error)}`,
          );
        }
        await handler(decision);
      },
      { connection, prefix: this.bullPrefix, concurrency: options.concurrency ?? 1 },
    );
    worker.on('error', (error) => this.onError(error));
    worker.on('failed', (job, error) =>
      this.onError(new Error(`decision job ${job?.id ?? '?'}: ${error.message}`)),
    );
    const consumer = { worker, connection };
    this.consumers.add(consumer);
    let stopping: Promise<void> | undefined;
    return () => {
      stopping ??= (async () => {
        this.consumers.delete(consumer);
        await worker.close();
        await connection.quit();
      })();
      return stopping;
    };
  }

  /**
   * The gate in front of an effect: the receipt verifies with this agent's secret, the run was
   * approved, the approval has not expired, and `step` (its tool and args, about to run) is exactly
   * the approved step. `now` defaults to the client's clock.
   * @example
   * const check = client.verifyStep(decision, step);
   * if (!check.ok) throw new Error(`not running ${step.id}: ${check.message}`);
   */
  verifyStep(
    decision: Decision,
    step: { readonly id: string; readonly tool: string; readonly args: JsonObject },
    options: { readonly now?: number } = {},
  ): StepVerification {
    return verifyDecisionStep(decision, step, this.secret, options.now ?? this.clock());
  }

  /**
   * Reports a step's outcome. Report `applying` right before the effect: it claims the step, and a
   * second claim (a redelivered decision, a second executor) answers `already_claimed` — do not run
   * the step then. A step left `applying` is shown as `uncertain` and never dispatched again.
   */
  async reportOutcome(
    runId: string,
    stepId: string,
    report: { readonly status: 'applying' | 'applied' | 'failed'; readonly detail?: string },
  ): Promise<OutcomeReport> {
    this.assertOpen();
    const result = await recordOutcome(
      this.redis,
      this.keys,
      { runId, stepId, ...report },
      {
        clock: this.clock,
        uncertainAfterMs: this.uncertainAfterMs,
      },
    );
    switch (result.kind) {
      case 'recorded':
        return { ok: true, outcome: result.outcome };
      case 'already_claimed':
        return {
          ok: false,
          reason: 'already_claimed',
          message: `step ${stepId} is already ${result.outcome.status}: do not run it again`,
          outcome: result.outcome,
        };
      case 'not_approved':
        return {
          ok: false,
          reason: 'not_approved',
          message: `run ${runId} is ${result.status}, not approved`,
        };
      case 'unknown_step':
        return { ok: false, reason: 'unknown_step', message: `run ${runId} has no step ${stepId}` };
      case 'not_found':
        return { ok: false, reason: 'not_found', message: `there is no run ${runId}` };
    }
  }

  /** Stops the decision consumers (letting active handlers finish), fails pending waits, closes connections. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const waiters of [...this.waiters.values()])
      for (const waiter of [...waiters]) waiter.fail(new ClientClosedError());
    const consumers = [...this.consumers];
    this.consumers.clear();
    await Promise.all(
      consumers.map(async ({ worker, connection }) => {
        await worker.close();
        await connection.quit();
      }),
    );
    await this.intake?.close();
    const subscriber = await this.subscriber?.catch(() => undefined);
    await subscriber?.quit().catch(() => subscriber.disconnect());
    if (this.ownsRedis) await this.redis.quit();
  }

  private assertOpen(): void {
    if (this.closed) throw new ClientClosedError();
  }

  /** One subscriber connection per client, on this agent's `decided` channel. */
  private subscribe(): Promise<Redis> {
    this.subscriber ??= (async () => {
      const subscriber = this.redis.duplicate();
      subscriber.on('error', (error) => this.onError(error));
      subscriber.on('message', (_channel: string, runId: string) => {
        for (const waiter of this.waiters.get(runId) ?? []) waiter.check();
      });
      await subscriber.subscribe(this.keys.decided(this.agent));
      return subscriber;
    })();
    return this.subscriber;
  }
}
