/**
 * Where the Slack messages that show a run are (the card, diff messages, escalation messages), by
 * name (keys.ts `messageName`). Slack bookkeeping, not approval state: no transition reads it, so it is
 * written directly (HSET is idempotent) rather than through the compare-and-set commit.
 */
import type { Redis } from 'ioredis';
import { type Keys, type MessageName, messageName } from './keys.ts';

export interface MessageRef {
  readonly channel: string;
  readonly ts: string;
}

export class MessageLedger {
  constructor(
    private readonly redis: Redis,
    private readonly keys: Keys,
  ) {}

  /** Records a message besides the card (the card is recorded by `ApprovalService.recordPosted`). */
  async record(runId: string, name: MessageName, ref: MessageRef): Promise<void> {
    await this.redis.hset(this.keys.forRun(runId).messages, messageName(name), JSON.stringify(ref));
  }

  /** Every message recorded for the run, by name. */
  async all(runId: string): Promise<Record<string, MessageRef>> {
    const hash = await this.redis.hgetall(this.keys.forRun(runId).messages);
    return Object.fromEntries(
      Object.entries(hash).map(([name, text]) => [name, JSON.parse(text) as MessageRef]),
    );
  }
}
