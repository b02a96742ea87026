/**
 * Decision delivery: the approvals service's `deliver` sink puts each final decision on the agent's
 * `decisions-<agent>` queue, where `AgentClient.onDecision` consumes it.
 *
 * Inputs: a signed `Decision`, after the service committed it. Outputs: one job `decision-<runId>` on
 * `decisions-<agent>`. Idempotency: the job id is the run's, so a second delivery of the same decision
 * (the service's outbox sweep, a retried intake job) adds nothing while the job is kept (7 days after
 * completion; failed jobs are never removed).
 */
import { type JobsOptions, Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Decision } from '../pipeline/index.ts';
import { bullPrefix, decisionJobId, decisionsQueue } from './names.ts';

const SEVEN_DAYS_S = 7 * 24 * 3600;

/** Delivery options of every decision job. The consumer's handler is retried with backoff. */
export const DECISION_JOB_OPTIONS = {
  removeOnComplete: { age: SEVEN_DAYS_S },
  removeOnFail: false,
  attempts: 10,
  backoff: { type: 'exponential', delay: 1000 },
} as const satisfies JobsOptions;

export interface DecisionSink {
  /** The `deliver` option of `ApprovalService`. */
  readonly deliver: (decision: Decision) => Promise<void>;
  /** Closes the per-agent queues (not the connection, which the caller owns). */
  close(): Promise<void>;
}

/**
 * Creates the decision sink over a shared (client-role) connection.
 * @example
 * const sink = createDecisionSink({ connection: redis, prefix: 'cs' });
 * const service = new ApprovalService({ redis, config, secrets, deliver: sink.deliver });
 */
export function createDecisionSink(options: {
  readonly connection: Redis;
  readonly prefix?: string;
}): DecisionSink {
  const prefix = bullPrefix(options.prefix ?? 'cs');
  const queues = new Map<string, Queue>();
  const queueFor = (agent: string): Queue => {
    let queue = queues.get(agent);
    if (queue === undefined) {
      queue = new Queue(decisionsQueue(agent), { connection: options.connection, prefix });
      queues.set(agent, queue);
    }
    return queue;
  };
  return {
    async deliver(decision) {
      await queueFor(decision.agent).add('decision', decision, {
        ...DECISION_JOB_OPTIONS,
        jobId: decisionJobId(decision.runId),
      });
    },
    async close() {
      const open = [...queues.values()];
      queues.clear();
      await Promise.all(open.map((queue) => queue.close()));
    },
  };
}
