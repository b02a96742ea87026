/**
 * Expiry and escalation end to end: the bot over HTTP with real signing, the Slack emulator, real Redis
 * and real BullMQ delayed jobs — durations in seconds from config (test/support/timers-config.ts).
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FREIGHT_AGENT, freightContext, freightSteps, freightSummary } from '../../examples/freight/plans.ts';
import type { JournalRecord } from '../../src/approvals/index.ts';
import type { EmulatedMessage } from '../../src/emulator/index.ts';
import { createLogger } from '../../src/log.ts';
import { escalateJobId, TIMER_JOB_OPTIONS } from '../../src/queue/index.ts';
import { redisUrl } from '../helpers/redis.ts';
import { type BotStack, botStack } from '../support/bot-stack.ts';
import { editFreight } from '../support/freight-edits.ts';
import { actionIds, visibleText } from '../support/slack-blocks.ts';
import { eventually } from '../support/stack.ts';
import {
  ESCALATION_CHANNEL,
  ESCALATION_CHANNELS,
  LEVEL_1,
  LEVEL_2,
  timersConfig,
} from '../support/timers-config.ts';

let stack: BotStack;
let redis: Redis;
beforeAll(async () => {
  stack = await botStack('timers-flow', { config: timersConfig, channels: ESCALATION_CHANNELS });
  redis = new Redis(redisUrl());
});
afterAll(async () => {
  redis.disconnect();
  await stack.stop();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

async function submit(expiresIn: string): Promise<string> {
  const { runId } = await stack.client.submit({
    summary: freightSummary,
    context: freightContext,
    steps: freightSteps.map((step) => ({ ...step, args: { ...step.args } })),
    expiresIn,
  });
  return runId;
}

/** Every escalation message of a run (DMs and the escalation channel), oldest first. */
function escalations(runId: string): EmulatedMessage[] {
  return stack.slack.state
    .channels()
    .filter((channel) => channel.is_im || channel.id === ESCALATION_CHANNEL)
    .flatMap((channel) => stack.slack.state.messages(channel.id))
    .filter((message) => message.text.includes(runId))
    .sort((a, b) => a.ts.localeCompare(b.ts));
}

/** The reminder of a run in the card's channel (a top-level message of its own). */
const reminderOf = (runId: string) =>
  stack.cards().find((message) => message.text.startsWith('Reminder') && message.text.includes(runId));

/** Who a message went to: the user of a DM, or `#escalations`. */
function recipient(message: EmulatedMessage): string {
  if (message.channel === ESCALATION_CHANNEL) return '#escalations';
  return stack.slack.state.channel(message.channel)?.members.join(',') ?? '?';
}

/** A message as the emulator holds it now (after chat.update). */
const latest = (message: EmulatedMessage) =>
  stack.slack.state.message(message.channel, message.ts) ?? message;

/** Waits until `message` has no buttons and shows `text`. */
const settled = (message: EmulatedMessage, text: string) =>
  stack.until(() => {
    const now = latest(message);
    return actionIds(now.blocks).length === 0 && visibleText(now.blocks).includes(text) ? now : undefined;
  });

async function journal(runId: string): Promise<JournalRecord['event'][]> {
  const records = await redis.lrange(stack.countersign.approvals.keys.forRun(runId).journal, 0, -1);
  return records.map((text) => (JSON.parse(text) as JournalRecord).event);
}

const outcomes = async (runId: string) =>
  (await journal(runId))
    .map((event) => event.type)
    .filter((type) => type === 'approved' || type === 'rejected' || type === 'expired');

/** Ids of the run's timer jobs still waiting to fire. */
async function timerJobs(runId: string): Promise<string[]> {
  const jobs = await stack.countersign.timers.queue.getJobs(['delayed', 'waiting', 'prioritized']);
  return jobs
    .map((job) => job.id ?? '')
    .filter((id) => id.includes(runId))
    .sort();
}

/** A level-2 escalation of `version` fired by hand, as if a removal had come too late. */
async function fireLateEscalation(runId: string, version: number): Promise<void> {
  await stack.countersign.timers.queue.add(
    'escalate',
    { kind: 'escalate', runId, agent: FREIGHT_AGENT, version, level: 2, repeat: 0 },
    { ...TIMER_JOB_OPTIONS, jobId: `${escalateJobId(runId, version, 2)}-late` },
  );
}

describe('expiry', () => {
  it('updates the card and every escalation message, delivers expired; a click afterwards is refused', async () => {
    const runId = await submit('4s');
    const card = await stack.card(runId);
    expect(actionIds(card.blocks)).toEqual(['show_args', 'approve', 'reject', 'edit']);

    const decision = await stack.client.waitForDecision(runId, { timeoutMs: 15_000 });
    expect(decision).toMatchObject({ status: 'expired', decidedBy: 'timer' });
    expect(Date.parse(decision.decidedAt)).toBeGreaterThanOrEqual(Date.parse(decision.plan!.expiresAt));

    const expired = await settled(card, '*Expired*');
    expect(visibleText(expired.blocks)).toMatch(/⌛ \*Expired\* at .* — nothing was executed\./);
    const sent = escalations(runId);
    expect(sent.map(recipient)).toEqual([LEVEL_1, LEVEL_2, '#escalations', LEVEL_2, '#escalations']);
    for (const message of [reminderOf(runId)!, ...sent]) await settled(message, '⌛ *Expired*');
    expect(await timerJobs(runId)).toEqual([]);

    // The old card's Approve, clicked after expiry: a private refusal, nothing changes.
    const before = stack.slack.state.ephemerals('C0OPS').length;
    expect((await stack.click('U0OP1', card, 'approve')).status).toBe(200);
    const notice = await stack.until(() =>
      stack.slack.state
        .ephemerals('C0OPS')
        .slice(before)
        .find((ephemeral) => ephemeral.user === 'U0OP1'),
    );
    expect(notice.text).toMatch(/expired/i);
    expect(await outcomes(runId)).toEqual(['expired']);
    expect((await stack.countersign.approvals.getRun(runId))?.approvals).toEqual([]);
  });

  it('is enforced at the click when the timer was lost: an approve after expiresAt expires the run', async () => {
    const runId = await submit('2s');
    const card = await stack.card(runId);
    const run = await stack.countersign.approvals.getRun(runId);
    await eventually(async () => ((await timerJobs(runId)).length === 2 ? true : undefined));
    // The timers vanish (a lost job, a Redis restored without them): none of them will fire.
    await stack.countersign.timers.cancel(run!);
    expect(await timerJobs(runId)).toEqual([]);

    await sleep(Date.parse(run!.current.plan.expiresAt) + 100 - Date.now());
    await stack.click('U0OP1', card, 'approve');
    const decision = await stack.client.waitForDecision(runId, { timeoutMs: 10_000 });
    expect(decision.status).toBe('expired');
    expect((await journal(runId)).map((event) => event.type)).not.toContain('approval');
    expect(await outcomes(runId)).toEqual(['expired']);
    await settled(card, '*Expired*');
  });

  it('is enforced at a reject click too: no form opens, the run expires and the card says so', async () => {
    const runId = await submit('2s');
    const card = await stack.card(runId);
    const run = await stack.countersign.approvals.getRun(runId);
    await eventually(async () => ((await timerJobs(runId)).length === 2 ? true : undefined));
    await stack.countersign.timers.cancel(run!);

    await sleep(Date.parse(run!.current.plan.expiresAt) + 100 - Date.now());
    expect((await stack.click('U0OP1', card, 'reject')).status).toBe(200);
    const decision = await stack.client.waitForDecision(runId, { timeoutMs: 10_000 });
    expect(decision.status).toBe('expired');
    expect(stack.modal('U0OP1')).toBeUndefined();
    await settled(card, '*Expired*');
  });
});

describe('escalation', () => {
  it('escalates level by level to the right people (DM, channel), repeats the last level, and the card says so; an escalated person approves from the channel', async () => {
    const runId = await submit('30s');
    const card = await stack.card(runId);
    const sent = await stack.until(() => {
      const found = escalations(runId);
      return found.length === 5 ? found : undefined;
    });
    expect(sent.map(recipient)).toEqual([LEVEL_1, LEVEL_2, '#escalations', LEVEL_2, '#escalations']);
    expect(
      sent.map((message) => /\(([^()]*level \d[^()]*)\)/.exec(visibleText(message.blocks))?.[1]),
    ).toEqual(['leads, level 1', 'level 2', 'level 2', 'level 2, repeat 1', 'level 2, repeat 1']);
    for (const message of sent)
      expect(actionIds(message.blocks)).toEqual(['show_args', 'approve', 'reject', 'edit']);
    // Each links to the card itself (chat.getPermalink), not only to its channel.
    const permalink = `https://acme.slack.com/archives/${card.channel}/p${card.ts.replace('.', '')}`;
    for (const message of sent) expect(JSON.stringify(message.blocks)).toContain(`<${permalink}|the card>`);
    // Before the first level, a reminder in the card's channel.
    const reminder = reminderOf(runId)!;
    expect(reminder.ts < sent[0]!.ts).toBe(true);
    expect(visibleText(reminder.blocks)).toMatch(/^⏰ \*Reminder\*: a freight-ops plan has waited since/);
    const opened = stack.slack.calls
      .filter((call) => call.method === 'conversations.open')
      .map((call) => call.args.users);
    expect(opened).toEqual(expect.arrayContaining([LEVEL_1, LEVEL_2]));
    await stack.until(() =>
      visibleText(latest(card).blocks).match(
        /⏫ Escalated to <@U0LEAD1> and <@U0FIN2> \(levels 1 and 2\), last at \d\d:\d\d UTC: may approve operators steps \(each approval counts as one of the group’s; irreversible steps included\)\./,
      ),
    );
    const escalated = (await journal(runId)).flatMap((event) =>
      event.type === 'escalated' ? [[event.version, event.level, event.notified]] : [],
    );
    expect(escalated).toEqual([
      [1, 1, [LEVEL_1]],
      [1, 2, [LEVEL_2]],
      [1, 2, [LEVEL_2]],
    ]);
    // The chain is done: only the expiry is left.
    expect(await timerJobs(runId)).toEqual([`expire-${runId}-v1`]);

    // U0FIN2 is no operator, but the run was escalated to them.
    const inChannel = sent[4]!;
    await stack.click(LEVEL_2, inChannel, 'approve');
    const decision = await stack.client.waitForDecision(runId, { timeoutMs: 10_000 });
    expect(decision).toMatchObject({ status: 'approved', decidedBy: LEVEL_2 });
    // Named as users.info names them (the stand-in's U0FIN2 has its id for a name).
    for (const message of [card, reminder, ...sent]) await settled(message, `*Approved* by ${LEVEL_2} at`);
    expect(await timerJobs(runId)).toEqual([]);
  });

  it('stops when someone decides: the lead approves from the level-1 DM, no level 2 follows, and a late timer only journals stale_timer', async () => {
    const runId = await submit('30s');
    const dm = await stack.until(() => escalations(runId)[0]);
    expect(recipient(dm)).toBe(LEVEL_1);
    // Level 2 is scheduled before the level-1 message is posted.
    expect(await timerJobs(runId)).toEqual([`escalate-${runId}-v1-l2`, `expire-${runId}-v1`]);

    await stack.click(LEVEL_1, dm, 'approve');
    const decision = await stack.client.waitForDecision(runId, { timeoutMs: 10_000 });
    expect(decision).toMatchObject({ status: 'approved', decidedBy: LEVEL_1 });
    await settled(dm, '*Approved* by Lee Haugen at');
    expect(await timerJobs(runId)).toEqual([]);

    await sleep(2500); // past level 2 and its repeat
    expect(escalations(runId)).toHaveLength(1);

    await fireLateEscalation(runId, 1);
    const stale = await eventually(async () =>
      (await journal(runId)).find((event) => event.type === 'stale_timer'),
    );
    expect(stale).toEqual({ type: 'stale_timer', timer: 'escalate-v1-l2', version: 1, currentVersion: 1 });
    expect(escalations(runId)).toHaveLength(1);
    expect(await outcomes(runId)).toEqual(['approved']);
  });

  it('an edit during escalation supersedes the escalation message, refuses its buttons, removes version 1’s timers and starts version 2’s clock', async () => {
    const runId = await submit('30s');
    const dm = await stack.until(() => escalations(runId)[0]);

    // The lead edits from the DM.
    const { answer } = await editFreight(stack, LEVEL_1, dm, { window: '2026-04-06' });
    expect(answer.status).toBe(200);
    const editedAt = Date.now();
    const superseded = await settled(dm, '⏭️ *Superseded by version 2*');
    expect(visibleText(superseded.blocks)).toMatch(
      /— <https:\/\/acme\.slack\.com\/archives\/C0OPS\/p\d+\|the card> in <#C0OPS> shows it/,
    );
    const jobs = await timerJobs(runId);
    expect(jobs.filter((id) => id.includes('-v1'))).toEqual([]);
    expect(jobs).toContain(`expire-${runId}-v2`);

    // Its old buttons are refused as stale, privately.
    const before = stack.slack.state.ephemerals(dm.channel).length;
    await stack.click(LEVEL_1, dm, 'approve');
    const notice = await stack.until(() => stack.slack.state.ephemerals(dm.channel)[before]);
    expect(notice.text).toMatch(/version 2 is current/);
    expect((await stack.countersign.approvals.getRun(runId))?.approvals).toEqual([]);

    // Version 2's clock: level 1 again, about a second after the edit.
    const again = await stack.until(
      () => escalations(runId).find((message) => message.ts !== dm.ts && recipient(message) === LEVEL_1),
      5_000,
    );
    expect(Date.now() - editedAt).toBeGreaterThanOrEqual(800);
    expect(visibleText(again.blocks)).toContain('· version 2 ·');
    expect(actionIds(again.blocks)).toEqual(['show_args', 'approve', 'reject', 'edit']);
    const escalated = (await journal(runId)).flatMap((event) =>
      event.type === 'escalated' ? [[event.version, event.level]] : [],
    );
    expect(escalated.slice(0, 2)).toEqual([
      [1, 1],
      [2, 1],
    ]);

    // A version-1 timer that fires anyway changes nothing.
    await fireLateEscalation(runId, 1);
    const stale = await eventually(async () =>
      (await journal(runId)).find((event) => event.type === 'stale_timer'),
    );
    expect(stale).toEqual({ type: 'stale_timer', timer: 'escalate-v1-l2', version: 1, currentVersion: 2 });

    await stack.click(LEVEL_1, again, 'approve');
    const decision = await stack.client.waitForDecision(runId, { timeoutMs: 10_000 });
    expect(decision).toMatchObject({ status: 'approved', version: 2 });
    // The agent hears first; the click's presenter removes the timers right after.
    await eventually(async () => ((await timerJobs(runId)).length === 0 ? true : undefined));
  });
});

describe('races', () => {
  it('an approve and the expiry at the same instant come to exactly one outcome, delivered once', async () => {
    const offsets = [-60, -30, -10, 0, 0, 10, 30, 60];
    const runIds = await Promise.all(offsets.map(() => submit('3s')));
    const cards = await Promise.all(runIds.map((runId) => stack.card(runId)));
    const expiries = await Promise.all(
      runIds.map(async (runId) =>
        Date.parse((await stack.countersign.approvals.getRun(runId))!.current.plan.expiresAt),
      ),
    );
    await Promise.all(
      runIds.map(async (_, index) => {
        await sleep(expiries[index]! + offsets[index]! - Date.now());
        await stack.click('U0OP1', cards[index]!, 'approve');
      }),
    );
    const seen = new Set<string>();
    for (const [index, runId] of runIds.entries()) {
      const decision = await stack.client.waitForDecision(runId, { timeoutMs: 10_000 });
      seen.add(decision.status);
      expect(await outcomes(runId)).toEqual([decision.status]);
      await settled(cards[index]!, decision.status === 'approved' ? '*Approved*' : '*Expired*');
      expect(await stack.countersign.approvals.getDecision(runId)).toEqual(decision);
    }
    expect([...seen].every((status) => status === 'approved' || status === 'expired')).toBe(true);
  });
});

describe('an escalation channel the bot cannot post to', () => {
  let bare: BotStack;
  const errors: string[] = [];
  beforeAll(async () => {
    // No #escalations in this workspace: chat.postMessage answers channel_not_found.
    bare = await botStack('timers-nochannel', {
      config: timersConfig,
      logger: createLogger({ level: 'error', destination: { write: (line) => errors.push(line) } }),
    });
  });
  afterAll(() => bare.stop());

  it('still DMs the level’s people and goes on with the chain; the failure is reported', async () => {
    const { runId } = await bare.client.submit({
      summary: freightSummary,
      context: freightContext,
      steps: freightSteps.map((step) => ({ ...step, args: { ...step.args } })),
      expiresIn: '30s',
    });
    const dms = await bare.until(() => {
      const found = bare.slack.state
        .channels()
        .filter((channel) => channel.is_im)
        .flatMap((channel) => bare.slack.state.messages(channel.id))
        .filter((message) => message.text.includes(runId));
      return found.length === 3 ? found : undefined;
    });
    expect(dms.map((message) => bare.slack.state.channel(message.channel)?.members.join(','))).toEqual([
      LEVEL_1,
      LEVEL_2,
      LEVEL_2,
    ]);
    expect(
      Object.keys((await bare.countersign.messages.all(runId)).recorded).filter((name) =>
        name.endsWith(ESCALATION_CHANNEL),
      ),
    ).toEqual([]);
    // Level 2 and its repeat each failed to post in the channel, and said so.
    const reported = await bare.until(() => {
      const lines = errors.filter((line) => line.includes(`escalation message of run ${runId}`));
      return lines.length === 2 ? lines : undefined;
    });
    expect(reported.map((line) => /posting the (\S+) escalation/.exec(line)?.[1])).toEqual(['l2', 'l2r1']);
    expect(reported.every((line) => line.includes('channel_not_found'))).toBe(true);
    // Logged as JSON lines that name the run.
    expect(reported.map((line) => (JSON.parse(line) as { runId?: string }).runId)).toEqual([runId, runId]);
  });
});
