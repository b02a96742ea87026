/**
 * Decision webhooks: for an agent configured with `webhook: { url }`, each decision is POSTed to that
 * URL, signed with the agent's secret in the same header scheme agents sign their requests with (so
 * the agent can authenticate Countersign), with `X-Countersign-Delivery` as the idempotency key.
 *
 * Inputs: job data `{ agent, runId }` on the `webhooks` queue, one job per decision
 * (`webhook-<runId>`), added by the approvals outbox after the decision is committed. Outputs: one
 * HTTP POST per attempt; a 2xx answer completes the job. Anything else — a refusal, a timeout, a
 * closed port — is retried with exponential backoff for about eleven hours (12 attempts from 10 s),
 * then the job fails and stays for inspection. Idempotency: the delivery id is the job id, the same on
 * every attempt, so a receiver that saw it already answers 2xx and does nothing.
 */
import { type JobsOptions, Queue, UnrecoverableError, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import type { ErrorReporter, Logger } from '../log.ts';
import type { Decision } from '../pipeline/index.ts';
import { AUTH_HEADERS, signedHeaders } from '../protocol/index.ts';
import { bullPrefix, WEBHOOKS_QUEUE, webhookJobId } from './names.ts';
import { CRASH_RECOVERY, reportToStderr, type SupervisedWorker, supervise } from './supervised-worker.ts';

export const WEBHOOK_JOB_OPTIONS = {
  attempts: 12,
  backoff: { type: 'exponential', delay: 10_000 },
  removeOnComplete: { age: 24 * 3600 },
  removeOnFail: { age: 14 * 24 * 3600 },
} as const satisfies JobsOptions;

/** Where an agent's webhook posts, if it has one. */
export type WebhookOf = (agent: string) => string | undefined;

export interface WebhookSink {
  /** Queues the decision's delivery when its agent has a webhook (idempotent per run). */
  enqueue(decision: Decision): Promise<void>;
  close(): Promise<void>;
}

export function createWebhookSink(options: {
  readonly connection: Redis;
  readonly prefix?: string;
  readonly webhookOf: WebhookOf;
  /** The first retry's delay, doubling after (default 10 s: about eleven hours over 12 attempts). */
  readonly retryDelayMs?: number;
  /** The queue's connection errors (default: a line on stderr). */
  readonly onError?: ErrorReporter;
  /** Debug lines for jobs done. */
  readonly logger?: Logger;
}): WebhookSink {
  const queue = new Queue(WEBHOOKS_QUEUE, {
    connection: options.connection,
    prefix: bullPrefix(options.prefix ?? 'cs'),
  });
  queue.on('error', (error) => (options.onError ?? reportToStderr)(error, 'the webhooks queue'));
  return {
    async enqueue(decision) {
      if (options.webhookOf(decision.agent) === undefined) return;
      await queue.add(
        'decision',
        { agent: decision.agent, runId: decision.runId },
        {
          ...WEBHOOK_JOB_OPTIONS,
          ...(options.retryDelayMs === undefined
            ? {}
            : { backoff: { type: 'exponential', delay: options.retryDelayMs } }),
          jobId: webhookJobId(decision.runId),
        },
      );
    },
    close: () => queue.close(),
  };
}

/** What the webhook worker counts, by outcome. */
export interface WebhookMetrics {
  attempt(outcome: 'delivered' | 'refused' | 'unreachable'): void;
}

export interface WebhookWorkerOptions {
  /** A worker-role connection (`maxRetriesPerRequest: null`). */
  readonly connection: Redis;
  readonly prefix?: string;
  readonly webhookOf: WebhookOf;
  readonly secretOf: (agent: string) => string | undefined;
  /** The stored decision of a run (the approvals service's `getDecision`). */
  readonly decisionOf: (runId: string) => Promise<Decision | undefined>;
  readonly metrics?: WebhookMetrics;
  readonly clock?: () => number;
  /** How long one POST may take (default 10 s). */
  readonly timeoutMs?: number;
  readonly concurrency?: number;
  /** Worker errors and failed jobs, with the job's id and run (default: a line on stderr). */
  readonly onError?: ErrorReporter;
  /** Debug lines for jobs done. */
  readonly logger?: Logger;
}

const jobData = z.object({ agent: z.string(), runId: z.string() });

/** Starts the worker that makes the deliveries. The caller owns the connection. */
export function startWebhookWorker(options: WebhookWorkerOptions): SupervisedWorker<Worker> {
  const clock = options.clock ?? Date.now;
  const worker = new Worker(
    WEBHOOKS_QUEUE,
    async (job) => {
      const parsed = jobData.safeParse(job.data);
      if (!parsed.success) throw new UnrecoverableError('webhook job data is not { agent, runId }');
      const { agent, runId } = parsed.data;
      const url = options.webhookOf(agent);
      const secret = options.secretOf(agent);
      const decision = await options.decisionOf(runId);
      if (url === undefined || secret === undefined || decision === undefined) {
        throw new UnrecoverableError(`nothing to deliver for run ${runId} of ${agent}`);
      }
      const body = JSON.stringify(decision);
      const target = new URL(url);
      let response: Response;
      try {
        response = await fetch(target, {
          method: 'POST',
          body,
          headers: {
            'content-type': 'application/json',
            [AUTH_HEADERS.delivery]: job.id ?? webhookJobId(runId),
            ...signedHeaders({
              secret,
              agent,
              method: 'POST',
              pathWithQuery: `${target.pathname}${target.search}`,
              body,
              now: clock(),
            }),
          },
          signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
        });
        await response.body?.cancel();
      } catch (error) {
        options.metrics?.attempt('unreachable');
        throw new Error(
          `webhook ${target.origin}${target.pathname}: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
      if (!response.ok) {
        options.metrics?.attempt('refused');
        throw new Error(`webhook ${target.origin}${target.pathname} answered ${response.status}`);
      }
      options.metrics?.attempt('delivered');
      return { status: response.status };
    },
    {
      connection: options.connection,
      prefix: bullPrefix(options.prefix ?? 'cs'),
      concurrency: options.concurrency ?? 16,
      ...CRASH_RECOVERY,
    },
  );
  return supervise(worker, 'webhooks', options.onError, options.logger);
}
