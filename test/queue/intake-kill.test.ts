import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FREIGHT_AGENT, freightContext, freightSteps, freightSummary } from '../../examples/freight/plans.ts';
import type { JournalRecord } from '../../src/approvals/index.ts';
import { decisionsQueue, INTAKE_QUEUE, type IntakeWorker } from '../../src/queue/index.ts';
import { eventually, type IntakeStack, intakeStack } from '../support/intake-stack.ts';

const CHILD = fileURLToPath(new URL('../support/intake-worker-child.ts', import.meta.url));
const steps = freightSteps.map((step) => ({ ...step, args: { ...step.args } }));

let stack: IntakeStack;
let child: ChildProcess | undefined;
let rescuer: IntakeWorker | undefined;
beforeAll(() => {
  stack = intakeStack('kill');
});
afterEach(async () => {
  child?.kill('SIGKILL');
  child = undefined;
  // Each test's job must reach its own child, not the worker that rescued the previous one.
  await rescuer?.close();
  rescuer = undefined;
});
afterAll(() => stack.cleanup());

/** Starts the worker process and resolves once it is ready; `paused` resolves with the run id it holds. */
async function startChild(pause: 'before-store' | 'after-store') {
  const spawned = spawn(process.execPath, ['--import', 'tsx', CHILD], {
    env: {
      ...process.env,
      REDIS_URL: stack.url,
      CS_PREFIX: stack.prefix,
      CS_PAUSE: pause,
      CS_PAUSE_MS: '60000',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  child = spawned;
  let output = '';
  const lines = new Set<(line: string) => void>();
  spawned.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
    let newline = output.indexOf('\n');
    while (newline >= 0) {
      const line = output.slice(0, newline);
      output = output.slice(newline + 1);
      for (const listener of lines) listener(line);
      newline = output.indexOf('\n');
    }
  });
  const waitFor = (pattern: RegExp) =>
    new Promise<RegExpMatchArray>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`child never printed ${pattern}`)), 15_000);
      const listener = (line: string) => {
        const match = pattern.exec(line);
        if (match === null) return;
        clearTimeout(timer);
        lines.delete(listener);
        resolve(match);
      };
      lines.add(listener);
      spawned.once('exit', (code, signal) => reject(new Error(`child exited (${code ?? signal})`)));
    });
  const paused = waitFor(/^paused (\S+)$/).then((match) => match[1] ?? '');
  paused.catch(() => {}); // the ready wait reports a dead child first
  await waitFor(/^ready$/);
  return { process: spawned, paused };
}

async function journalEvents(runId: string): Promise<string[]> {
  const records = await stack.redis.lrange(stack.service.keys.forRun(runId).journal, 0, -1);
  return records.map((text) => (JSON.parse(text) as JournalRecord).event.type);
}

/** The completed intake job of a run, once the worker finished it (storing comes before completing). */
function completedIntakeJob(runId: string) {
  return eventually(
    async () => {
      const jobs = await stack.queue(INTAKE_QUEUE).getJobs(['completed']);
      return jobs.find((job) => job.data.body.runId === runId);
    },
    15_000,
    `the intake job of ${runId} to complete`,
  );
}

async function decisionJobs(): Promise<number> {
  return stack
    .queue(decisionsQueue(FREIGHT_AGENT))
    .getJobCountByTypes('wait', 'active', 'completed', 'failed', 'delayed');
}

describe('a worker killed mid-intake (SIGKILL, a real child process)', () => {
  it('is retried by another worker: the plan is stored once and its decision delivered once', async () => {
    const worker = await startChild('before-store');
    const client = stack.client();
    const { runId } = await client.submit({
      summary: freightSummary,
      context: freightContext,
      steps,
      expiresIn: '2h',
    });
    expect(await worker.paused).toBe(runId);
    worker.process.kill('SIGKILL');
    expect(await stack.service.getRun(runId)).toBeUndefined();

    rescuer = stack.startWorker({ lockDuration: 1000, stalledInterval: 1000 });
    const job = await completedIntakeJob(runId);
    expect(job.returnvalue).toMatchObject({ kind: 'pending' });
    expect(job.stalledCounter).toBe(1);
    expect(await stack.service.getRun(runId)).toMatchObject({ version: 1, status: 'pending' });

    expect((await stack.service.approve({ runId, version: 1, userId: 'U0OP1' })).kind).toBe('approved');
    await stack.service.redeliverUndelivered();
    expect(await journalEvents(runId)).toEqual(['submitted', 'validated', 'approval', 'approved']);
    expect(await stack.redis.exists(stack.service.keys.forRun(runId).version(2))).toBe(0);
    expect(await decisionJobs()).toBe(1);
    await expect(client.waitForDecision(runId, { timeoutMs: 5_000 })).resolves.toMatchObject({
      status: 'approved',
    });
  });

  it('after storing an all-auto plan: the retry finds it stored, and the decision is still delivered once', async () => {
    const before = await decisionJobs();
    const worker = await startChild('after-store');
    const client = stack.client();
    const { runId } = await client.submit({ steps: [steps[0]!], expiresIn: '2h' });
    expect(await worker.paused).toBe(runId);
    worker.process.kill('SIGKILL');
    expect(await stack.service.getRun(runId)).toMatchObject({ status: 'approved' });

    rescuer = stack.startWorker({ lockDuration: 1000, stalledInterval: 1000 });
    const job = await completedIntakeJob(runId);
    expect(job.returnvalue).toMatchObject({ kind: 'duplicate' });
    expect(await journalEvents(runId)).toEqual(['submitted', 'validated', 'approved']);
    expect(await decisionJobs()).toBe(before + 1);
  });
});
