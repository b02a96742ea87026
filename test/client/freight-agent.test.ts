import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runFreightAgent } from '../../examples/freight/agent.ts';
import { eventually, FREIGHT_SECRET, type IntakeStack, intakeStack } from '../support/intake-stack.ts';

const AGENT_SCRIPT = fileURLToPath(new URL('../../examples/freight/agent.ts', import.meta.url));

let stack: IntakeStack;
beforeAll(() => {
  stack = intakeStack('freight-agent');
  stack.startWorker();
});
afterAll(() => stack.cleanup());

/** Plays the operator: approves the run as soon as intake stored it. */
async function approveWhenStored(runId: string) {
  await eventually(() => stack.service.getRun(runId), 10_000, `run ${runId} stored`);
  await stack.service.approve({ runId, version: 1, userId: 'U0OP1' });
}

describe('the sample freight agent (examples/freight/agent.ts)', () => {
  it('executes each approved step once, verified and claimed, and reports it applied', async () => {
    const lines: string[] = [];
    let approving: Promise<void> | undefined;
    const { decision, executed } = await runFreightAgent(stack.client(), {
      log: (line) => lines.push(line),
      timeoutMs: 10_000,
      onSubmitted: (runId) => {
        approving = approveWhenStored(runId);
      },
    });
    await approving;
    expect(decision.status).toBe('approved');
    expect(executed).toEqual(['s1', 's2', 's3']);
    expect(lines.filter((line) => line.includes('✓'))).toHaveLength(3);
    const outcomes = await stack.service.getOutcomes(decision.runId);
    expect(outcomes.map((o) => [o.stepId, o.status]).sort()).toEqual([
      ['s1', 'applied'],
      ['s2', 'applied'],
      ['s3', 'applied'],
    ]);
  });

  it('runs as a script: submits, waits, executes and exits 0', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', AGENT_SCRIPT], {
      env: {
        ...process.env,
        REDIS_URL: stack.url,
        FREIGHT_AGENT_SECRET: FREIGHT_SECRET,
        COUNTERSIGN_PREFIX: stack.prefix,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const runId = await eventually(
      async () => /submitted run (\S+);/.exec(output)?.[1],
      15_000,
      'the submission',
    );
    await approveWhenStored(runId);
    expect({ code: await exited, output }).toMatchObject({ code: 0 });
    expect(output).toContain('decision: approved by U0OP1');
    expect(output.match(/✓ s\d verified/g)).toEqual(['✓ s1 verified', '✓ s2 verified', '✓ s3 verified']);
  }, 30_000);
});
