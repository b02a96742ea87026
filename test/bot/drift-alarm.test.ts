/**
 * The drift alarm through the running bot: plans submitted over HTTP, edits committed by the service,
 * the alarm posted once to the agent's escalation target in the Slack stand-in (numbers, window, links
 * to the most edited runs), not again while it stays raised; and the window's figures in /metrics.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freightConfigInput } from '../../examples/freight/countersign.config.ts';
import { freightContext, freightSteps, freightSummary } from '../../examples/freight/plans.ts';
import { defineConfig } from '../../src/config/index.ts';
import { buildAppHomeOpenedEvent, postEvent } from '../../src/emulator/index.ts';
import { type BotStack, botStack, SIGNING_SECRET } from '../support/bot-stack.ts';
import { visibleText } from '../support/slack-blocks.ts';

const agent = freightConfigInput.agents['freight-ops']!;
const config = defineConfig({
  ...freightConfigInput,
  agents: { 'freight-ops': { ...agent, drift: { above: 0.5, minPlans: 2, notify: ['C0OPS'] } } },
});

let stack: BotStack;
beforeAll(async () => {
  stack = await botStack('drift-alarm', { config });
});
afterAll(() => stack.stop());

const alarms = () => stack.slack.state.messages('C0OPS').filter((m) => m.text.includes('rewriting'));

/** Finance rewrites the reschedule and the reply: 2 of the plan's 3 steps. */
async function rewrite(runId: string): Promise<void> {
  const run = await stack.countersign.approvals.getRun(runId);
  const steps = run!.current.plan.steps.map(({ id, tool, args }) =>
    tool === 'reschedule_delivery'
      ? { id, tool, args: { ...args, window: '2026-04-07' } }
      : tool === 'send_reply'
        ? { id, tool, args: { ...args, body: 'We moved your delivery to Tuesday.' } }
        : { id, tool, args },
  );
  const edited = await stack.countersign.approvals.applyEdit({
    runId,
    baseVersion: run!.version,
    editorId: 'U0FIN1',
    steps,
  });
  expect(edited.kind).toBe('edited');
}

describe('the drift alarm', () => {
  it('is posted once when half of the plans are rewritten, with the numbers and the most edited run', async () => {
    const submit = () =>
      stack.client.submit({
        summary: freightSummary,
        context: freightContext,
        steps: freightSteps,
        expiresIn: '2h',
      });
    const first = await submit();
    const second = await submit();
    await stack.card(first.runId);
    await stack.card(second.runId);
    expect(alarms()).toHaveLength(0);

    await rewrite(first.runId);
    const alarm = await stack.until(() => alarms()[0], 10_000);
    const text = visibleText(alarm.blocks);
    expect(text).toContain('1 of 2 plans');
    expect(text).toContain('50%');
    expect(text).toContain('24 h');
    expect(text).toContain(first.runId);
    expect(text).toContain('2 of 3 steps added, changed or removed');
    expect(JSON.stringify(alarm.blocks)).toContain('slack.com/archives'); // a link to the card

    // Still above the threshold: the next edit and the sweep post nothing more.
    await rewrite(second.runId);
    await stack.countersign.drift.sweep();
    expect(alarms()).toHaveLength(1);

    const metrics = await (await fetch(`${stack.baseUrl}/metrics`)).text();
    expect(metrics).toMatch(/countersign_window_plans\{agent="freight-ops"\} 2/);
    expect(metrics).toMatch(/countersign_window_plans_rewritten\{agent="freight-ops"\} 2/);
    expect(metrics).toMatch(/countersign_window_rewritten_share\{agent="freight-ops"\} 1/);
    expect(metrics).toMatch(/countersign_window_seconds\{agent="freight-ops"\} 86400/);
    expect(metrics).toMatch(/countersign_edit_steps_touched_count\{agent="freight-ops"\} 2/);
  });

  it("shows the agent's leads, on their Home tab, the window, the alarm and the edits that recur", async () => {
    // U0LEAD1 is notified by freight-ops' escalation; an operator leads nothing.
    for (const user of ['U0LEAD1', 'U0OP1']) {
      expect(
        (await postEvent(stack.eventsUrl, SIGNING_SECRET, buildAppHomeOpenedEvent({ user }))).status,
      ).toBe(200);
    }
    const lead = await stack.until(() => stack.slack.state.homeView('U0LEAD1'));
    const text = visibleText(lead.blocks);
    expect(text).toContain('How people edit the plans of agents you lead');
    expect(text).toContain(
      '*freight-ops* — last 24 h: 2 plans, 2 edited, 2 more than half rewritten (100%) · ⚠️ *drift alarm raised*',
    );
    expect(text).toContain(
      'in 2 of 2 edited plans an operator moved `window` of `reschedule_delivery` later',
    );
    const operator = await stack.until(() => stack.slack.state.homeView('U0OP1'));
    expect(visibleText(operator.blocks)).not.toContain('How people edit');
  });
});
