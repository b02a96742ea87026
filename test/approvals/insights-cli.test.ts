/**
 * `npm run insights` (scripts/insights.ts) as a real child process, on journals the approvals service
 * wrote: submissions, edits by people, approvals and outcome reports with named numbers.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import config from '../../examples/freight/countersign.config.ts';
import { addedRefundStep, freightPlan } from '../../examples/freight/plans.ts';
import type { InsightsReport } from '../../src/approvals/insights/index.ts';
import { ApprovalService } from '../../src/approvals/service.ts';
import { redisUrl, testRedis } from '../helpers/redis.ts';
import { testSigning } from '../support/stack.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const url = redisUrl();
const { redis, prefix: testPrefix, cleanup } = testRedis('insights-cli');
const prefix = testPrefix.replace(/:/g, '-');

function insights(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'scripts/insights.ts', ...args, '--redis-url', url, '--prefix', prefix],
      { cwd: ROOT, env: { PATH: process.env.PATH ?? '' }, timeout: 30_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

let now = Date.parse('2026-04-01T09:00:00Z');
const service = new ApprovalService({ redis, config, prefix, signer: testSigning.signer, clock: () => now });

async function act(use: Promise<{ kind: string }>, kind: string): Promise<void> {
  expect((await use).kind).toBe(kind);
  now += 30_000;
}

/**
 * Eight runs of freight-ops. Finance adds the $1,489 refund to four (U0FIN1), an operator moves the
 * delivery later in three (U0OP2), two of them both; two runs are not edited. Every run is approved and
 * each refund reported applied with the amount refunded.
 */
beforeAll(async () => {
  for (let i = 0; i < 8; i++) {
    const runId = `run-ins-${i}`;
    await act(
      service.submitPlan({ runId, agent: 'freight-ops', raw: JSON.stringify(freightPlan({ runId, now })) }),
      'pending',
    );
    const steps = (await service.getRun(runId))!.current.plan.steps.map(({ id, tool, args }) => ({
      id,
      tool,
      args,
    }));
    let version = 1;
    if (i >= 3 && i < 6) {
      const moved = steps.map((s) =>
        s.id === 's2' ? { ...s, args: { ...s.args, window: '2026-04-06' } } : s,
      );
      await act(
        service.applyEdit({ runId, baseVersion: version, editorId: 'U0OP2', steps: moved }),
        'edited',
      );
      steps.splice(0, steps.length, ...moved);
      version++;
    }
    if (i < 4) {
      await act(
        service.applyEdit({
          runId,
          baseVersion: version,
          editorId: 'U0FIN1',
          steps: [...steps, addedRefundStep],
        }),
        'edited',
      );
      version++;
    }
    const approvers = i < 4 ? ['U0OP1', 'U0FIN2', 'U0FIN3'] : ['U0OP1'];
    for (const [index, userId] of approvers.entries()) {
      await act(
        service.approve({ runId, version, userId }),
        index === approvers.length - 1 ? 'approved' : 'awaiting',
      );
    }
    if (i < 4) {
      await service.recordOutcome({
        runId,
        stepId: 's4',
        status: 'applied',
        metrics: { refund_cents: 148_900 },
      });
      await service.recordOutcome({ runId, stepId: 's3', status: i === 0 ? 'failed' : 'applied' });
    } else {
      await service.recordOutcome({ runId, stepId: 's3', status: 'applied' });
    }
  }
}, 60_000);

afterAll(cleanup);

describe('npm run insights', () => {
  it('reports edits, recurring edits with suggestions and outcomes by authorship, as JSON', async () => {
    const { code, stdout, stderr } = await insights(['--since', '2026-03-31', '--format', 'json']);
    expect(stderr).toContain('insights: 8 runs of 1 agent read');
    expect(code).toBe(0);
    const report = JSON.parse(stdout) as InsightsReport;
    expect(report.runs).toBe(8);
    const [agent] = report.agents;
    expect(agent?.agent).toBe('freight-ops');
    expect(agent?.edits).toMatchObject({ plans: 8, edited: 6, edits: 7 });
    expect(agent?.recurring.map((g) => [g.pattern.key, g.plans, g.editedPlans])).toEqual([
      ['added_at_end:issue_refund', 4, 6],
      ['later:reschedule_delivery:window', 3, 6],
    ]);
    const refunds = agent?.outcomes.find((g) => g.tool === 'issue_refund');
    expect(refunds).toMatchObject({
      authorship: 'added',
      steps: 4,
      applied: 4,
      metrics: { refund_cents: { count: 4, sum: 595_600, median: 148_900 } },
    });
    const replies = agent?.outcomes.filter((g) => g.tool === 'send_reply');
    expect(replies?.map((g) => [g.authorship, g.steps, g.applied, g.failed])).toEqual([['agent', 8, 7, 1]]);
  });

  it('prints Markdown in the tools’ terms with the config, and keeps to the agent and period asked', async () => {
    const md = await insights([
      '--config',
      'examples/freight/countersign.config.ts',
      '--since',
      '2026-03-31',
    ]);
    expect(md.code).toBe(0);
    expect(md.stdout).toContain('## Agent `freight-ops`');
    expect(md.stdout).toContain('in 4 of 6 edited plans an operator added `issue_refund` at the end');
    expect(md.stdout).toContain(
      'in 3 of 6 edited plans an operator moved `window` of `reschedule_delivery` later',
    );
    expect(md.stdout).toMatch(/`issue_refund` \| a person \(added\) \| 4 \| 4 \| 4 \(100%\)/);
    const none = await insights(['--agent', 'billing', '--since', '2026-03-31']);
    expect(none.stdout).toContain('No plans in this period.');
    const later = await insights(['--since', '2026-05-01', '--format', 'json']);
    expect((JSON.parse(later.stdout) as InsightsReport).runs).toBe(0);
  });

  it('refuses bad arguments with the usage and exit 2', async () => {
    const bad = await insights(['--since', 'yesterday']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--since "yesterday" is not a date');
  });
});
