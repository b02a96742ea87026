import type { Block, KnownBlock, ModalView } from '@slack/types';
import type { WebClient } from '@slack/web-api';
import { z } from 'zod';

/** A message as views/ builds it: fallback text plus blocks. */
export interface SlackMessage {
  readonly text: string;
  readonly blocks: readonly (KnownBlock | Block)[];
}

import type { MessageRef } from '../approvals/message-ledger.ts';
import { CountersignError } from '../pipeline/index.ts';

export type { MessageRef };

/** Where the card of each run was posted; the approval store keeps it (see ApprovalService.recordPosted). */
export interface CardLedger {
  cardOf(runId: string): Promise<MessageRef | undefined>;
  recordCard(runId: string, version: number, ref: MessageRef): Promise<void>;
}

const CARD_EVENT = 'countersign_card';

const historySchema = z.object({
  messages: z
    .array(
      z.object({
        ts: z.string(),
        metadata: z
          .object({ event_type: z.string(), event_payload: z.record(z.string(), z.unknown()).optional() })
          .optional(),
      }),
    )
    .default([]),
});

/**
 * The one module that talks to Slack's Web API (chat.*, views.*, conversations.*). It relies on
 * @slack/web-api for retries and 429 handling, and posts each run's card at most once: the ledger
 * remembers its ts, and after an unknown outcome (a timeout, a crash) the channel history is searched
 * for the card by its message metadata before anything is posted again.
 */
export class SlackGateway {
  constructor(
    private readonly client: WebClient,
    private readonly ledger: CardLedger,
  ) {}

  /**
   * Shows `message` as the run's card: posts it the first time, updates it in place afterwards.
   * Returns where the card is.
   */
  async showCard(input: {
    runId: string;
    version: number;
    channel: string;
    message: SlackMessage;
  }): Promise<MessageRef> {
    const recorded = await this.ledger.cardOf(input.runId);
    const known = recorded ?? (await this.findCard(input.channel, input.runId));
    if (known !== undefined) {
      await this.update(known, input.message);
      if (recorded === undefined) await this.ledger.recordCard(input.runId, input.version, known);
      return known;
    }
    const posted = await this.client.chat.postMessage({
      channel: input.channel,
      text: input.message.text,
      blocks: [...input.message.blocks],
      unfurl_links: false,
      unfurl_media: false,
      metadata: { event_type: CARD_EVENT, event_payload: { run_id: input.runId, version: input.version } },
    });
    const ref = { channel: posted.channel ?? input.channel, ts: posted.ts ?? '' };
    await this.ledger.recordCard(input.runId, input.version, ref);
    return ref;
  }

  /** Looks for a card already posted for the run (its metadata names the run). */
  private async findCard(channel: string, runId: string): Promise<MessageRef | undefined> {
    const history = historySchema.parse(
      await this.client.conversations.history({ channel, include_all_metadata: true, limit: 100 }),
    );
    const found = history.messages.find(
      (message) =>
        message.metadata?.event_type === CARD_EVENT && message.metadata.event_payload?.run_id === runId,
    );
    return found === undefined ? undefined : { channel, ts: found.ts };
  }

  /** Replaces a message's content (cards, diff and escalation messages after a decision). */
  async update(ref: MessageRef, message: SlackMessage): Promise<void> {
    await this.client.chat.update({
      channel: ref.channel,
      ts: ref.ts,
      text: message.text,
      blocks: [...message.blocks],
    });
  }

  /** Posts in a thread (the diff message goes under the card). */
  async reply(thread: MessageRef, message: SlackMessage): Promise<MessageRef> {
    const posted = await this.client.chat.postMessage({
      channel: thread.channel,
      thread_ts: thread.ts,
      text: message.text,
      blocks: [...message.blocks],
      unfurl_links: false,
      unfurl_media: false,
    });
    return { channel: posted.channel ?? thread.channel, ts: posted.ts ?? '' };
  }

  /** Posts a message to a channel or an open DM. */
  async post(channel: string, message: SlackMessage): Promise<MessageRef> {
    const posted = await this.client.chat.postMessage({
      channel,
      text: message.text,
      blocks: [...message.blocks],
      unfurl_links: false,
      unfurl_media: false,
    });
    return { channel: posted.channel ?? channel, ts: posted.ts ?? '' };
  }

  /** A private answer only `user` sees (refusals, explanations). */
  async whisper(channel: string, user: string, message: SlackMessage): Promise<void> {
    await this.client.chat.postEphemeral({ channel, user, text: message.text, blocks: [...message.blocks] });
  }

  /** Opens a DM with one or more people and returns its channel id. */
  async openDm(users: readonly string[]): Promise<string> {
    const opened = await this.client.conversations.open({ users: users.join(',') });
    const id = opened.channel?.id;
    if (id === undefined)
      throw new CountersignError('slack_unexpected', 'conversations.open returned no channel');
    return id;
  }

  async openModal(triggerId: string, view: ModalView): Promise<void> {
    await this.client.views.open({ trigger_id: triggerId, view });
  }

  async updateModal(viewId: string, view: ModalView, hash?: string): Promise<void> {
    await this.client.views.update({ view_id: viewId, view, ...(hash === undefined ? {} : { hash }) });
  }
}
