/** The sample freight agent (examples/freight/agent.ts) over HTTP, against the stand-in server. */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { moveDeliveryAfterApproval, runFreightAgent } from '../../examples/freight/agent.ts';
import { resetFreightData } from '../../examples/freight/data.ts';
import { previewReschedule } from '../../examples/freight/previews.ts';
import { AgentClient } from '../../src/client/index.ts';
import { AGENT, type FakeCountersign, SECRET, startFakeCountersign } from './fake-countersign.ts';

const AGENT_SCRIPT = fileURLToPath(new URL('../../examples/freight/agent.ts', import.meta.url));

let server: FakeCountersign;
beforeEach(async () => {
  server = await startFakeCountersign();
});
afterEach(async () => {
  resetFreightData();
  await server.close();
});

/**
 * Decides the run with the reschedule's precondition bound, as Countersign's pipeline binds it from
 * the tool's preview (issue 19; the stand-in cannot run previews itself).
 */
function decideWithPreconditions(runId: string): void {
  server.decide(runId, {
    steps: (steps) =>
      steps.map((step) => {
        if (step.tool !== 'reschedule_delivery') return step;
        const { type, id, version } = previewReschedule(
          step.args as { delivery_id: string; window: string },
        ).target;
        return { ...step, preconditions: [{ type, id, version }] };
      }),
  });
}

describe('the sample freight agent (examples/freight/agent.ts)', () => {
  it('executes each approved step once, verified and claimed, and reports it applied', async () => {
    const client = new AgentClient({ url: server.url, agent: AGENT, secret: SECRET });
    const lines: string[] = [];
    try {
      const { decision, executed } = await runFreightAgent(client, {
        log: (line) => lines.push(line),
        timeoutMs: 10_000,
        onSubmitted: (runId) => setTimeout(() => server.decide(runId), 50),
      });
      expect(decision.status).toBe('approved');
      expect(executed).toEqual(['s1', 's2', 's3']);
      expect(lines.filter((line) => line.includes('✓'))).toHaveLength(3);
      expect([...server.outcomes.values()].map((o) => [o.stepId, o.status])).toEqual([
        ['s1', 'applied'],
        ['s2', 'applied'],
        ['s3', 'applied'],
      ]);
    } finally {
      await client.close();
    }
  });

  it('checks the world right before each effect: an unchanged delivery lets the reschedule run', async () => {
    const client = new AgentClient({ url: server.url, agent: AGENT, secret: SECRET });
    try {
      const { executed } = await runFreightAgent(client, {
        log: () => {},
        timeoutMs: 10_000,
        onSubmitted: (runId) => setTimeout(() => decideWithPreconditions(runId), 50),
      });
      expect(executed).toEqual(['s1', 's2', 's3']);
    } finally {
      await client.close();
    }
  });

  it('refuses the reschedule with world_changed when the delivery moved after approval, and runs nothing after it', async () => {
    const client = new AgentClient({ url: server.url, agent: AGENT, secret: SECRET });
    const lines: string[] = [];
    try {
      const { executed } = await runFreightAgent(client, {
        log: (line) => lines.push(line),
        timeoutMs: 10_000,
        onSubmitted: (runId) => setTimeout(() => decideWithPreconditions(runId), 50),
        afterApproval: () => {
          lines.push(moveDeliveryAfterApproval());
        },
      });
      expect(executed).toEqual(['s1']);
      expect(lines).toContain(
        'a dispatcher moved delivery dl_55120 to 2026-04-07 after the approval (version 7 → 8)',
      );
      expect(lines.at(-2)).toBe(
        '  ✗ s2: not executing (world_changed: delivery dl_55120 changed since it was approved (version 7 → 8): preview again and ask for approval again; do not apply)',
      );
      expect(lines.at(-1)).toBe('    submit the plan again so people approve the world as it is now');
      // s2 was never claimed: Countersign shows it waiting, not applying.
      expect([...server.outcomes.values()].map((o) => [o.stepId, o.status])).toEqual([['s1', 'applied']]);
    } finally {
      await client.close();
    }
  });

  it('runs as a script with COUNTERSIGN_URL and FREIGHT_AGENT_SECRET: submits, waits, executes and exits 0', async () => {
    const { REDIS_URL: _redis, ...env } = process.env;
    const child = spawn(process.execPath, ['--import', 'tsx', AGENT_SCRIPT], {
      env: { ...env, COUNTERSIGN_URL: server.url, FREIGHT_AGENT_SECRET: SECRET },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const append = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const runId = /submitted run (\S+);/.exec(output)?.[1];
      if (runId !== undefined && server.runs.get(runId)?.decision === undefined) server.decide(runId);
    };
    child.stdout.on('data', append);
    child.stderr.on('data', append);
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect({ code, output }).toMatchObject({ code: 0 });
    expect(output).toContain('decision: approved by U0OP1');
    expect(output.match(/✓ s\d verified/g)).toEqual(['✓ s1 verified', '✓ s2 verified', '✓ s3 verified']);
  }, 30_000);

  it('exits 2 without a secret, and 1 naming the problem when Countersign cannot be reached', async () => {
    const run = (env: Record<string, string>) =>
      new Promise<{ code: number | null; output: string }>((resolve) => {
        const { FREIGHT_AGENT_SECRET: _secret, ...rest } = process.env;
        const child = spawn(process.execPath, ['--import', 'tsx', AGENT_SCRIPT], {
          env: { ...rest, ...env },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let output = '';
        const append = (chunk: Buffer) => {
          output += chunk.toString('utf8');
        };
        child.stdout.on('data', append);
        child.stderr.on('data', append);
        child.once('exit', (code) => resolve({ code, output }));
      });
    expect(await run({ COUNTERSIGN_URL: server.url })).toMatchObject({ code: 2 });
    await server.close();
    const unreachable = await run({ COUNTERSIGN_URL: server.url, FREIGHT_AGENT_SECRET: SECRET });
    expect(unreachable.code).toBe(1);
    expect(unreachable.output).toContain('network_error');
  }, 60_000);
});
