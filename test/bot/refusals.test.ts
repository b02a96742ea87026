import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRecord, readJournal } from '../../src/approvals/index.ts';
import {
  buildBlockActionsPayload,
  buildViewSubmissionPayload,
  buttonAction,
  type EmulatedMessage,
  postInteraction,
} from '../../src/emulator/index.ts';
import { encodeEditMetadata } from '../../views/index.ts';
import { redisUrl } from '../helpers/redis.ts';
import { type BotStack, botStack, SIGNING_SECRET } from '../support/bot-stack.ts';
import { submitFreight } from '../support/freight-edits.ts';
import { submissionAnswer, visibleText } from '../support/slack-blocks.ts';

let stack: BotStack;
let redis: Redis;
beforeAll(async () => {
  stack = await botStack('refusals');
  redis = new Redis(redisUrl());
});
afterAll(async () => {
  redis.disconnect();
  await stack.stop();
});

/** The types of the run's journal events, oldest first. */
async function journalTypes(runId: string): Promise<string[]> {
  const records = await readJournal(redis, stack.countersign.approvals.keys, runId);
  return records.map((text) => {
    const parsed = parseRecord(text);
    if (!parsed.ok) throw new Error(parsed.message);
    return parsed.record.event.type;
  });
}

/** Final decisions counted at GET /metrics. */
async function decisionsCounted(status: string): Promise<number> {
  const metrics = await (await fetch(`${stack.baseUrl}/metrics`)).text();
  const line = new RegExp(`^countersign_decisions_total\\{status="${status}"\\} (\\d+)$`, 'm').exec(metrics);
  return Number(line?.[1] ?? 0);
}

/** Lets the bot finish whatever it does after its ack (work happens after the HTTP answer). */
const settle = () => new Promise((resolve) => setTimeout(resolve, 300));

const clickPayload = (userId: string, card: EmulatedMessage, actionId: string) =>
  buildBlockActionsPayload({
    user: { id: userId },
    container: { type: 'message', channel: { id: card.channel }, message: card },
    action: buttonAction(card.blocks, actionId),
  });

describe('requests the bot answers without changing anything', () => {
  it('acknowledges an unknown action id with 200 and does nothing', async () => {
    const runId = await submitFreight(stack);
    const card = await stack.card(runId);
    await settle();
    const calls = stack.slack.calls.length;
    const journal = await journalTypes(runId);

    const approve = buttonAction(card.blocks, 'approve');
    const answer = await postInteraction(
      stack.eventsUrl,
      SIGNING_SECRET,
      buildBlockActionsPayload({
        user: { id: 'U0OP1' },
        container: { type: 'message', channel: { id: card.channel }, message: card },
        action: { ...approve, actionId: 'approve_everything_forever' },
      }),
    );
    expect(answer.status).toBe(200);
    await settle();
    expect(stack.slack.calls.slice(calls)).toEqual([]);
    expect(await journalTypes(runId)).toEqual(journal);
    expect((await stack.countersign.approvals.getRun(runId))?.approvals).toEqual([]);
  });

  it('answers an approve whose button value it never wrote privately, changing nothing', async () => {
    const runId = await submitFreight(stack);
    const card = await stack.card(runId);
    const before = stack.slack.state.ephemerals('C0OPS').length;
    const forged = { ...buttonAction(card.blocks, 'approve'), value: '{"run":"someone-else"}' };
    expect((await stack.click('U0OP1', card, 'approve', () => forged)).status).toBe(200);
    const notice = await stack.until(() => stack.slack.state.ephemerals('C0OPS')[before]);
    expect(notice).toMatchObject({
      user: 'U0OP1',
      text: "I can't tell which plan that was for. Nothing was changed.",
    });
    expect((await stack.countersign.approvals.getRun(runId))?.approvals).toEqual([]);
  });

  it('answers an edit_plan submission for an unknown run (or unreadable metadata) with a notice, not a 500', async () => {
    for (const [privateMetadata, notice] of [
      [
        encodeEditMetadata({ runId: 'run-that-never-was', baseVersion: 1, added: [] }),
        /I can't find run `run-that-never-was`\. Nothing was changed\./,
      ],
      ['not an edit session', /I can't tell which plan that was for\. Nothing was changed\./],
    ] as const) {
      const answer = await postInteraction(
        stack.eventsUrl,
        SIGNING_SECRET,
        buildViewSubmissionPayload({
          user: { id: 'U0FIN1' },
          view: { id: 'V0FORGED', callback_id: 'edit_plan', private_metadata: privateMetadata },
          values: {},
        }),
      );
      expect(answer.status).toBe(200);
      const { response_action, view } = submissionAnswer(answer.body);
      expect(response_action).toBe('update');
      expect(visibleText(view?.blocks ?? [])).toMatch(notice);
    }
    expect(await stack.countersign.approvals.getRun('run-that-never-was')).toBeUndefined();
  });

  it('a double click on approve records one approval and one decision', async () => {
    const runId = await submitFreight(stack);
    const card = await stack.card(runId);
    const decided = await decisionsCounted('approved');
    const before = stack.slack.state.ephemerals('C0OPS').length;

    const answers = await Promise.all(
      [1, 2].map(() =>
        postInteraction(stack.eventsUrl, SIGNING_SECRET, clickPayload('U0OP1', card, 'approve')),
      ),
    );
    expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
    const decision = await stack.client.waitForDecision(runId, { timeoutMs: 10_000 });
    expect(decision).toMatchObject({ status: 'approved', decidedBy: 'U0OP1' });
    // The second click is told, privately, that the plan is already approved.
    const notice = await stack.until(() => stack.slack.state.ephemerals('C0OPS')[before]);
    expect(notice.text).toMatch(/already approved by <@U0OP1>/);
    await settle();

    const run = await stack.countersign.approvals.getRun(runId);
    expect(run?.approvals.map((approval) => approval.userId)).toEqual(['U0OP1', 'U0OP1']); // s2 and s3
    const types = await journalTypes(runId);
    expect(types.filter((type) => type === 'approval')).toHaveLength(1);
    expect(types.filter((type) => type === 'approved')).toHaveLength(1);
    expect(await decisionsCounted('approved')).toBe(decided + 1);
    expect(stack.slack.state.ephemerals('C0OPS')).toHaveLength(before + 1);
  });

  it("Slack's retry of an approve changes nothing a second time", async () => {
    // A small refund: one finance approval for s4, operators still awaited for s2 and s3.
    const runId = await submitFreight(stack, [
      { id: 's4', tool: 'issue_refund', args: { invoice_id: 'in_74121', amount: 4_500 } },
    ]);
    const card = await stack.card(runId);
    const payload = clickPayload('U0FIN1', card, 'approve');
    const before = stack.slack.state.ephemerals('C0OPS').length;

    expect((await postInteraction(stack.eventsUrl, SIGNING_SECRET, payload)).status).toBe(200);
    const first = await stack.until(() => stack.slack.state.ephemerals('C0OPS')[before]);
    expect(first.text).toMatch(/Your approval of step `s4` is recorded/);
    const retry = await postInteraction(stack.eventsUrl, SIGNING_SECRET, payload, { retryNum: 1 });
    expect(retry.status).toBe(200);
    const second = await stack.until(() => stack.slack.state.ephemerals('C0OPS')[before + 1]);
    expect(second.text).toMatch(/already approved every step you can approve here/);

    const run = await stack.countersign.approvals.getRun(runId);
    expect(run?.status).toBe('pending');
    expect(run?.approvals.map((approval) => approval.userId)).toEqual(['U0FIN1']);
    expect((await journalTypes(runId)).filter((type) => type === 'approval')).toHaveLength(1);
  });
});
