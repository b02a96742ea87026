/**
 * What rendering costs in Slack calls, which Slack rations (chat.update: about 50 a minute for the
 * whole workspace): a new run's card is posted once and not touched again until the run changes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freightContext, freightSteps, freightSummary } from '../../examples/freight/plans.ts';
import { type BotStack, botStack } from '../support/bot-stack.ts';

let stack: BotStack;
beforeAll(async () => {
  stack = await botStack('render-cost');
});
afterAll(() => stack.stop());

describe('a new run', () => {
  it('gets its card with one chat.postMessage and no chat.update', async () => {
    const { runId } = await stack.client.submit({
      summary: freightSummary,
      context: freightContext,
      steps: freightSteps.map((step) => ({ ...step, args: { ...step.args } })),
      expiresIn: '2h',
    });
    const card = await stack.card(runId);
    await stack.rendered(runId);
    const calls = stack.slack.calls.filter(
      (call) => call.method === 'chat.postMessage' || call.method === 'chat.update',
    );
    expect(calls.map((call) => call.method)).toEqual(['chat.postMessage']);
    expect(stack.slack.state.message(card.channel, card.ts)?.text).toContain('awaiting approval');
  });
});
