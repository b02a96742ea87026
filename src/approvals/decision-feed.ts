/**
 * Each agent's decisions in the order they were delivered: a capped Redis stream per agent that the
 * gateway serves as `GET /v1/decisions` (a long-polled feed with a cursor). Appended by the outbox when
 * a decision is delivered, so an entry may repeat after a crash (agents dedupe by run id); the stream
 * keeps the most recent entries only.
 */
import type { Redis } from 'ioredis';
import type { Decision } from '../pipeline/index.ts';
import type { Keys } from './keys.ts';

/** How many entries an agent's feed keeps (approximately: trimmed in whole stream nodes). */
export const FEED_LENGTH = 10_000;

export interface FeedEntry {
  /** The stream id: pass it back as `after` to read on from here. */
  readonly cursor: string;
  readonly decision: Decision;
}

export class DecisionFeed {
  constructor(
    private readonly redis: Redis,
    private readonly keys: Keys,
  ) {}

  /** Appends a delivered decision and tells the agent's long polls. */
  async append(decision: Decision): Promise<void> {
    await this.redis.xadd(
      this.keys.feed(decision.agent),
      'MAXLEN',
      '~',
      FEED_LENGTH,
      '*',
      'run',
      decision.runId,
    );
    await this.redis.publish(this.keys.feedChannel(decision.agent), decision.runId);
  }

  /** Up to `count` entries after `after` (exclusive; from the oldest kept when undefined), oldest first. */
  async read(agent: string, after: string | undefined, count: number): Promise<FeedEntry[]> {
    const start = after === undefined ? '-' : `(${after}`;
    const entries = await this.redis.xrange(this.keys.feed(agent), start, '+', 'COUNT', count);
    if (entries.length === 0) return [];
    // One GET per run (not MGET): each run's keys live in their own Cluster slot.
    const texts = await Promise.all(
      entries.map(([, fields]) => this.redis.get(this.keys.forRun(fields[1] ?? '').decision)),
    );
    return entries.flatMap(([cursor], index) => {
      const text = texts[index];
      return text === null || text === undefined ? [] : [{ cursor, decision: JSON.parse(text) as Decision }];
    });
  }

  /** The newest cursor of the agent's feed ('0-0' when it is empty): where a reader that wants only new entries starts. */
  async head(agent: string): Promise<string> {
    const [last] = await this.redis.xrevrange(this.keys.feed(agent), '+', '-', 'COUNT', 1);
    return last?.[0] ?? '0-0';
  }
}
