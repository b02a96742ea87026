/**
 * A Countersign back end for queue and client tests, on the harness's Redis under a prefix of its own:
 * the approvals service with the freight config, the decision sink, and (optionally) an intake worker.
 * `cleanup()` closes everything it opened, obliterates the queues and deletes the prefix's keys.
 */
import { randomBytes } from 'node:crypto';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { FREIGHT_AGENT } from '../../examples/freight/plans.ts';
import { ApprovalService, RefusalLog } from '../../src/approvals/index.ts';
import { AgentClient, type AgentClientOptions } from '../../src/client/index.ts';
import {
  bullPrefix,
  createDecisionSink,
  createRedisConnection,
  type DecisionSink,
  decisionsQueue,
  INTAKE_QUEUE,
  type IntakeWorker,
  type IntakeWorkerOptions,
  startIntakeWorker,
} from '../../src/queue/index.ts';
import { deleteKeysUnder, redisUrl } from '../helpers/redis.ts';
import { freightConfig } from './freight.ts';

export const FREIGHT_SECRET = 'freight-test-secret-0123456789';
export const freightSecrets = (agent: string) => (agent === FREIGHT_AGENT ? FREIGHT_SECRET : undefined);

/** A key prefix createKeys accepts (no `:`), unique per call: `t-<name>-<8 hex>`. */
export function stackPrefix(name: string): string {
  return `t-${name.replace(/[^A-Za-z0-9_-]+/g, '-').slice(0, 20)}-${randomBytes(4).toString('hex')}`;
}

export interface IntakeStack {
  readonly url: string;
  readonly prefix: string;
  /** Client-role connection shared by the service and the sink. */
  readonly redis: Redis;
  readonly service: ApprovalService;
  readonly sink: DecisionSink;
  /** BullMQ queues on this prefix, for inspection. */
  queue(name: string): Queue;
  /** Starts an intake worker (stopped by cleanup). */
  startWorker(options?: Partial<IntakeWorkerOptions>): IntakeWorker;
  /** An agent client for freight-ops on this prefix (closed by cleanup). */
  client(options?: Partial<AgentClientOptions>): AgentClient;
  cleanup(): Promise<void>;
}

export function intakeStack(name: string): IntakeStack {
  const url = redisUrl();
  const prefix = stackPrefix(name);
  const redis = createRedisConnection(url, { role: 'client' });
  const sink = createDecisionSink({ connection: redis, prefix });
  const service = new ApprovalService({
    redis,
    config: freightConfig,
    secrets: freightSecrets,
    prefix,
    deliver: sink.deliver,
  });
  const workers: IntakeWorker[] = [];
  const workerConnections: Redis[] = [];
  const clients: AgentClient[] = [];
  const queues = new Map<string, Queue>();
  return {
    url,
    prefix,
    redis,
    service,
    sink,
    queue(queueName) {
      let queue = queues.get(queueName);
      if (queue === undefined) {
        queue = new Queue(queueName, { connection: redis, prefix: bullPrefix(prefix) });
        queues.set(queueName, queue);
      }
      return queue;
    },
    startWorker(options = {}) {
      const connection = createRedisConnection(url, { role: 'worker' });
      workerConnections.push(connection);
      const worker = startIntakeWorker({
        connection,
        service,
        refusals: new RefusalLog(redis, service.keys),
        redis,
        keys: service.keys,
        agents: freightConfig.agents,
        secrets: freightSecrets,
        prefix,
        log: () => {},
        ...options,
      });
      workers.push(worker);
      return worker;
    },
    client(options = {}) {
      const client = new AgentClient({
        redisUrl: url,
        agent: FREIGHT_AGENT,
        secret: FREIGHT_SECRET,
        prefix,
        onError: () => {},
        ...options,
      } as AgentClientOptions);
      clients.push(client);
      return client;
    },
    async cleanup() {
      await Promise.all(clients.map((client) => client.close()));
      await Promise.all(workers.map((worker) => worker.close()));
      await sink.close();
      for (const queueName of [INTAKE_QUEUE, decisionsQueue(FREIGHT_AGENT)]) {
        const queue = this.queue(queueName);
        await queue.obliterate({ force: true });
      }
      await Promise.all([...queues.values()].map((queue) => queue.close()));
      await Promise.all(workerConnections.map((connection) => connection.quit()));
      const admin = new Redis(url);
      try {
        await deleteKeysUnder(admin, prefix);
      } finally {
        admin.disconnect();
        await redis.quit();
      }
    },
  };
}

/** Polls `read` until it returns something other than undefined, or fails after `timeoutMs`. */
export async function eventually<T>(
  read: () => Promise<T | undefined>,
  timeoutMs = 10_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
