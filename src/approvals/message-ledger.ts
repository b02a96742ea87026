/**
 * Where the Slack messages that show a run are (the card, diff messages, escalation messages), by
 * name (keys.ts `messageName`), with what each shows: the digest of its content and the run revision
 * it was rendered from — so a rendering never writes an older state over a newer one, and a message
 * already showing the right thing is left alone. Posts that may have reached Slack without an answer
 * are marked, so the next rendering looks for them before posting again. Slack bookkeeping, not
 * approval state: no transition reads it, so it is written directly rather than through the commit.
 */
import type { Redis } from 'ioredis';
import { type Keys, type MessageName, messageName } from './keys.ts';

export interface MessageRef {
  readonly channel: string;
  readonly ts: string;
  /** The digest of the content last written (absent for messages recorded before it was kept). */
  readonly digest?: string;
  /** The run revision that content was rendered from. */
  readonly revision?: number;
}

/** A message posted after an attempt whose outcome is unknown: Slack is searched again for late copies. */
export interface Verification {
  /** When the post was made (ms): a copy can land until the unknown attempt's request is surely over. */
  readonly since: number;
  readonly channel: string;
  readonly threadTs?: string;
  /** Copies already turned into duplicate notices. */
  readonly noticed: readonly string[];
}

export interface MessageLedgerEntries {
  readonly recorded: Readonly<Record<string, MessageRef>>;
  readonly pending: ReadonlySet<string>;
  readonly refused: ReadonlySet<string>;
  readonly verifying: ReadonlyMap<string, Verification>;
}

const PENDING = 'pending:';
const VERIFY = 'verify:';
const REFUSED = 'refused:';

export class MessageLedger {
  constructor(
    private readonly redis: Redis,
    private readonly keys: Keys,
  ) {}

  /** Records where a message is and what it shows. */
  async record(runId: string, name: MessageName, ref: MessageRef): Promise<void> {
    const field = messageName(name);
    await this.redis
      .multi()
      .hset(this.keys.forRun(runId).messages, field, JSON.stringify(ref))
      .hdel(this.keys.forRun(runId).messages, `${PENDING}${field}`)
      .exec();
  }

  /** Marks a post about to be sent: until it is recorded, a rendering searches Slack before posting. */
  async beginPost(runId: string, name: MessageName, at: number): Promise<void> {
    await this.redis.hset(this.keys.forRun(runId).messages, `${PENDING}${messageName(name)}`, String(at));
  }

  /**
   * Marks a message Slack refused for good (a channel the bot is not in, a deleted user): renderings
   * do not try it again — it was reported once.
   */
  async refuse(runId: string, name: MessageName, reason: string): Promise<void> {
    await this.redis
      .multi()
      .hset(this.keys.forRun(runId).messages, `${REFUSED}${messageName(name)}`, reason)
      .hdel(this.keys.forRun(runId).messages, `${PENDING}${messageName(name)}`)
      .exec();
  }

  /** Keeps looking for late copies of a message (see `Verification`); `undefined` stops looking. */
  async verify(runId: string, name: MessageName, verification: Verification | undefined): Promise<void> {
    const field = `${VERIFY}${messageName(name)}`;
    if (verification === undefined) await this.redis.hdel(this.keys.forRun(runId).messages, field);
    else await this.redis.hset(this.keys.forRun(runId).messages, field, JSON.stringify(verification));
  }

  /** Forgets a message that no longer exists in Slack (deleted by someone): the next rendering posts it again. */
  async forget(runId: string, name: MessageName): Promise<void> {
    await this.redis.hdel(this.keys.forRun(runId).messages, messageName(name));
  }

  /** Every message recorded for the run by name, posts that may have been sent, and targets Slack refused. */
  async all(runId: string): Promise<MessageLedgerEntries> {
    const hash = await this.redis.hgetall(this.keys.forRun(runId).messages);
    const recorded: Record<string, MessageRef> = {};
    const pending = new Set<string>();
    const refused = new Set<string>();
    const verifying = new Map<string, Verification>();
    for (const [field, text] of Object.entries(hash)) {
      if (field.startsWith(PENDING)) pending.add(field.slice(PENDING.length));
      else if (field.startsWith(REFUSED)) refused.add(field.slice(REFUSED.length));
      else if (field.startsWith(VERIFY))
        verifying.set(field.slice(VERIFY.length), JSON.parse(text) as Verification);
      else recorded[field] = JSON.parse(text) as MessageRef;
    }
    return { recorded, pending, refused, verifying };
  }
}
