/**
 * An intake worker in its own process, for the kill test (test/queue/intake-kill.test.ts). Env:
 * REDIS_URL, CS_PREFIX, CS_PAUSE (`before-store` | `after-store`), CS_PAUSE_MS. The pause is put
 * around the service's submitPlan here, in the test's own wrapper: production code has no hook.
 * Prints `ready`, then `paused <runId>` when the parent may SIGKILL it mid-intake.
 */
import { ApprovalService, RefusalLog } from '../../src/approvals/index.ts';
import { createDecisionSink, createRedisConnection, startIntakeWorker } from '../../src/queue/index.ts';
import { freightConfig } from './freight.ts';
import { freightSecrets } from './intake-stack.ts';

const url = process.env.REDIS_URL ?? '';
const prefix = process.env.CS_PREFIX ?? '';
const pause = process.env.CS_PAUSE === 'after-store' ? 'after-store' : 'before-store';
const pauseMs = Number(process.env.CS_PAUSE_MS ?? '60000');

const redis = createRedisConnection(url, { role: 'client' });
const sink = createDecisionSink({ connection: redis, prefix });
const service = new ApprovalService({
  redis,
  config: freightConfig,
  secrets: freightSecrets,
  prefix,
  deliver: sink.deliver,
});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const slowService = {
  async submitPlan(input: Parameters<ApprovalService['submitPlan']>[0]) {
    if (pause === 'before-store') {
      process.stdout.write(`paused ${input.runId}\n`);
      await sleep(pauseMs);
    }
    const result = await service.submitPlan(input);
    if (pause === 'after-store') {
      process.stdout.write(`paused ${input.runId}\n`);
      await sleep(pauseMs);
    }
    return result;
  },
};

const intake = startIntakeWorker({
  connection: createRedisConnection(url, { role: 'worker' }),
  service: slowService,
  refusals: new RefusalLog(redis, service.keys),
  redis,
  keys: service.keys,
  agents: freightConfig.agents,
  secrets: freightSecrets,
  prefix,
  lockDuration: 1000,
  stalledInterval: 1000,
});
await intake.worker.waitUntilReady();
process.stdout.write('ready\n');
