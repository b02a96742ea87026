import { describe, expect, it } from 'vitest';
import { type CardLedger, type MessageRef, SlackGateway } from '../../src/bot/slack-gateway.ts';
import { emulatorClient, useSlackEmulator } from '../helpers/slack-emulator.ts';

const env = useSlackEmulator();

/** An in-memory ledger; a test clears it to play a process that lost the record of a post. */
function memoryLedger(): CardLedger & { cards: Map<string, MessageRef> } {
  const cards = new Map<string, MessageRef>();
  return {
    cards,
    cardOf: async (runId) => cards.get(runId),
    recordCard: async (runId, _version, ref) => {
      cards.set(runId, ref);
    },
  };
}

const message = (text: string) => ({
  text,
  blocks: [{ type: 'section' as const, text: { type: 'mrkdwn' as const, text } }],
});

describe('SlackGateway.showCard: one card per run', () => {
  it('posts the first time, with metadata naming the run, and updates in place after', async () => {
    const ledger = memoryLedger();
    const gateway = new SlackGateway(emulatorClient(env.slack), ledger);
    const first = await gateway.showCard({
      runId: 'run-a',
      version: 1,
      channel: 'C0OPS',
      message: message('v1'),
    });
    const second = await gateway.showCard({
      runId: 'run-a',
      version: 2,
      channel: 'C0OPS',
      message: message('v2'),
    });
    expect(second).toEqual(first);
    const cards = env.slack.state.messages('C0OPS');
    expect(cards).toHaveLength(1);
    expect(cards[0]?.text).toBe('v2');
    expect(cards[0]?.metadata).toMatchObject({
      event_type: 'countersign_card',
      event_payload: { run_id: 'run-a' },
    });
  });

  it('after an unknown outcome (the post went through, its ts was never recorded) finds the card by metadata instead of posting again', async () => {
    const ledger = memoryLedger();
    const gateway = new SlackGateway(emulatorClient(env.slack), ledger);
    await gateway.showCard({ runId: 'run-b', version: 1, channel: 'C0OPS', message: message('v1') });
    ledger.cards.clear(); // as if the process died between chat.postMessage and recording its ts
    const again = await gateway.showCard({
      runId: 'run-b',
      version: 1,
      channel: 'C0OPS',
      message: message('v1 again'),
    });
    const cards = env.slack.state.messages('C0OPS');
    expect(cards).toHaveLength(1);
    expect(again.ts).toBe(cards[0]?.ts);
    expect(cards[0]?.text).toBe('v1 again');
    expect(ledger.cards.get('run-b')).toEqual(again);
  });
});
