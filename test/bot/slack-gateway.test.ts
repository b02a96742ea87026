import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSlackClients, SlackGateway } from '../../src/bot/slack-gateway.ts';
import { createSlackEmulator } from '../../src/emulator/index.ts';
import { useSlackEmulator } from '../helpers/slack-emulator.ts';

const env = useSlackEmulator();

const gateway = () =>
  new SlackGateway(createSlackClients({ token: env.slack.botToken, apiUrl: env.slack.url }));

const message = (text: string) => ({
  text,
  blocks: [{ type: 'section' as const, text: { type: 'mrkdwn' as const, text } }],
});

describe('SlackGateway: every message it posts can be found again', () => {
  it('tags the card with the run and every other message with the run and its name', async () => {
    const slack = gateway();
    const card = await slack.post({
      channel: 'C0OPS',
      message: message('card'),
      tag: { runId: 'run-a', name: 'card' },
    });
    await slack.post({
      channel: 'C0OPS',
      threadTs: card.ts,
      message: message('diff'),
      tag: { runId: 'run-a', name: 'diff:v2' },
    });
    const [posted] = env.slack.state.messages('C0OPS');
    expect(posted?.metadata).toEqual({ event_type: 'countersign_card', event_payload: { run_id: 'run-a' } });
    const [reply] = env.slack.state.replies('C0OPS', card.ts);
    expect(reply?.metadata).toEqual({
      event_type: 'countersign_message',
      event_payload: { run_id: 'run-a', name: 'diff:v2' },
    });
  });

  it('finds a tagged message under hundreds of newer ones, and a reply in its thread, and nothing of another run', async () => {
    const slack = gateway();
    const card = await slack.post({
      channel: 'C0OPS',
      message: message('card'),
      tag: { runId: 'run-b', name: 'card' },
    });
    await slack.post({
      channel: 'C0OPS',
      threadTs: card.ts,
      message: message('d'),
      tag: { runId: 'run-b', name: 'diff:v2' },
    });
    for (let i = 0; i < 450; i++)
      await env.client.chat.postMessage({ channel: 'C0OPS', text: `chatter ${i}` });
    await slack.post({ channel: 'C0OPS', message: message('other'), tag: { runId: 'run-c', name: 'card' } });

    expect(await slack.find({ channel: 'C0OPS', tag: { runId: 'run-b', name: 'card' } })).toEqual([
      { channel: 'C0OPS', ts: card.ts },
    ]);
    const [diff] = await slack.find({
      channel: 'C0OPS',
      threadTs: card.ts,
      tag: { runId: 'run-b', name: 'diff:v2' },
    });
    expect(diff?.ts).toBe(env.slack.state.replies('C0OPS', card.ts)[0]?.ts);
    expect(await slack.find({ channel: 'C0OPS', tag: { runId: 'run-b', name: 'diff:v3' } })).toEqual([]);
    expect(await slack.find({ channel: 'C0OPS', tag: { runId: 'run-d', name: 'card' } })).toEqual([]);
  });

  it('answers "too_late" for a trigger id Slack refuses, instead of throwing', async () => {
    const view = {
      type: 'modal' as const,
      title: { type: 'plain_text' as const, text: 'Edit' },
      blocks: [],
    };
    expect(await gateway().openModal('not-a-trigger', view)).toBe('too_late');
  });
});

describe('SlackGateway at Slack’s rate limits', () => {
  // chat.update: 2 at once, then 2 a second (Retry-After is always 1 s here).
  const limited = createSlackEmulator({
    rateLimit: false,
    rateLimits: { 'chat.update': { perSecond: 2, burst: 2 } },
  });
  beforeAll(() => limited.start());
  afterEach(() => limited.reset());
  afterAll(() => limited.stop());
  const limitedGateway = () =>
    new SlackGateway(createSlackClients({ token: limited.botToken, apiUrl: limited.url }));

  it('sends updates answered 429 again once Retry-After is over, one at a time, no backoff on top: 8 at 2/s land within 5 s', async () => {
    const slack = limitedGateway();
    const cards = await Promise.all(
      Array.from({ length: 8 }, (_, index) =>
        slack.post({
          channel: 'C0OPS',
          message: message(`card ${index}`),
          tag: { runId: `run-${index}`, name: 'card' },
        }),
      ),
    );
    const started = Date.now();
    await Promise.all(cards.map((card, index) => slack.update(card, message(`updated ${index}`))));
    expect(Date.now() - started).toBeLessThan(5_000);
    // 6 of the first 8 at once are refused; after that, one call at a time: about one refusal a second.
    const refused = limited.calls.filter((call) => call.method === 'chat.update' && call.status === 429);
    expect(refused.length).toBeLessThanOrEqual(10);
    expect(limited.state.messages('C0OPS').map((card) => card.text)).toEqual(
      Array.from({ length: 8 }, (_, index) => `updated ${index}`),
    );
  });

  it('fails an update at once when Slack asks to wait longer than a minute, so its job is retried later', async () => {
    const slack = limitedGateway();
    const card = await slack.post({
      channel: 'C0OPS',
      message: message('card'),
      tag: { runId: 'run-x', name: 'card' },
    });
    limited.faults.inject({ method: 'chat.update', kind: '429', retryAfterSeconds: 120 });
    const started = Date.now();
    await expect(slack.update(card, message('updated'))).rejects.toMatchObject({ retryAfter: 120 });
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
