import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FREIGHT_AGENT } from '../../examples/freight/plans.ts';
import { AgentClient, type PlanStepInput } from '../../src/client/index.ts';
import type { CountersignConfig } from '../../src/config/index.ts';
import { checkMessageBlocks, checkView, stateValue } from '../../src/emulator/index.ts';
import { type BotStack, botStack } from '../support/bot-stack.ts';
import { freightConfig } from '../support/freight.ts';
import { cardAtVersion, submittedValues } from '../support/freight-edits.ts';
import { actionIds, blockIds, visibleText } from '../support/slack-blocks.ts';
import { FREIGHT_SECRET, testSigning } from '../support/stack.ts';
import { FREIGHT_USERS, mrkdwnTexts, unescapedMarkup } from '../views/fixtures.ts';

/** The freight config, allowing plans of up to 100 steps (the default limit is 50). */
const config: CountersignConfig = {
  ...freightConfig,
  pipeline: { ...freightConfig.pipeline, limits: { ...freightConfig.pipeline.limits, maxSteps: 100 } },
};

let stack: BotStack;
let agent: AgentClient;
beforeAll(async () => {
  stack = await botStack('untrusted-plans', { config });
  agent = new AgentClient({
    url: stack.baseUrl,
    agent: FREIGHT_AGENT,
    secret: FREIGHT_SECRET,
    publicKeys: testSigning.jwks,
    limits: { maxSteps: 100 },
  });
});
afterAll(async () => {
  await agent.close();
  await stack.stop();
});

const MARKUP = ['<!channel>', '<@U123>', '<http://evil|click>'];
const hostile = `Ping ${MARKUP.join(' and ')} & co`;

/** Markup Slack would act on in any mrkdwn text of a message, besides mentions of configured people. */
function liveMarkup(message: { text: string; blocks: readonly unknown[] }): string[] {
  return mrkdwnTexts(message).flatMap(({ at, text }) =>
    unescapedMarkup(text, FREIGHT_USERS).map((found) => `${at}: ${found}`),
  );
}

describe('plans that carry markup or are too large for one message', () => {
  it('never lets plan text ping, mention or link in the card or the diff message', async () => {
    const { runId } = await agent.submit({
      summary: hostile,
      context: { ticket_id: '74991', note: hostile, [MARKUP[2]!]: MARKUP[0]! },
      steps: [
        { id: 's1', tool: 'add_note', args: { ticket_id: '<@U123>', note: hostile } },
        { id: 's2', tool: 'send_reply', args: { ticket_id: '74991', body: hostile } },
      ],
      expiresIn: '2h',
    });
    const card = await stack.card(runId);
    expect(liveMarkup(card)).toEqual([]);
    for (const markup of MARKUP) expect(JSON.stringify(mrkdwnTexts(card))).not.toContain(markup);
    // Shown as text, not dropped.
    expect(visibleText(card.blocks)).toContain('&lt;!channel&gt;');

    // An edit that writes markup into the reply: the diff message (before → after) escapes both sides.
    const view = await stack.openModal('U0OP1', card, 'edit');
    const answer = await stack.submit(
      'U0OP1',
      view,
      submittedValues(view, { 'arg:s2:body': stateValue.plainText(`<!here> ${hostile}`) }),
    );
    expect(answer.status).toBe(200);
    const edited = await cardAtVersion(stack, card, 2);
    const diff = await stack.until(() => stack.thread(card)[0]);
    expect(liveMarkup(edited)).toEqual([]);
    expect(liveMarkup(diff)).toEqual([]);
    expect(visibleText(diff.blocks)).toContain('&lt;!here&gt;');
  });

  it('posts a 60-step plan within Block Kit limits, saying that more steps follow', async () => {
    const steps: PlanStepInput[] = Array.from({ length: 60 }, (_, index) => ({
      id: `s${index + 1}`,
      tool: 'send_reply',
      args: { ticket_id: '74991', body: `Update ${index + 1} of 60 on your delivery.` },
    }));
    const { runId } = await agent.submit({ summary: 'Sixty replies', steps, expiresIn: '2h' });

    const card = await stack.card(runId);
    expect(card.blocks.length).toBeLessThanOrEqual(50);
    expect(checkMessageBlocks(card.blocks)).toEqual([]);
    expect(visibleText(card.blocks)).toMatch(/more steps/);
    expect(visibleText(card.blocks)).toMatch(/s60/);
    expect(actionIds(card.blocks)).toEqual(['approve', 'reject', 'edit']);
    expect(stack.slack.calls.filter((call) => !call.response.ok)).toEqual([]);

    // Too large for one modal: Edit offers a step picker, inside the 100-block limit.
    const modal = await stack.openModal('U0OP1', card, 'edit');
    expect(modal.blocks.length).toBeLessThanOrEqual(100);
    expect(checkView(modal)).toEqual([]);
    expect(actionIds(modal.blocks)).toContain('pick_step');

    // Pick the last step, add a note beside it, change the reply and save: version 2.
    const picked = await stack.select('U0OP1', modal, 'pick_step', 's60');
    expect(blockIds(picked.blocks)).toContain('arg:s60:body');
    const withNote = await stack.select('U0OP1', picked, 'add_step', 'add_note');
    expect(blockIds(withNote.blocks)).toEqual(
      expect.arrayContaining(['arg:s60:body', 'arg:s61:ticket_id', 'arg:s61:note']),
    );
    const answer = await stack.submit(
      'U0OP1',
      withNote,
      submittedValues(withNote, {
        'arg:s60:body': stateValue.plainText('The last update, rewritten.'),
        'arg:s61:ticket_id': stateValue.plainText('74991'),
        'arg:s61:note': stateValue.plainText('Sent sixty updates.'),
      }),
    );
    expect(answer.status).toBe(200);
    const run = await stack.countersign.approvals.getRun(runId);
    expect(run?.version).toBe(2);
    expect(run?.current.plan.steps).toHaveLength(61);
    expect(run?.current.plan.steps[59]?.args.body).toBe('The last update, rewritten.');
  });
});
