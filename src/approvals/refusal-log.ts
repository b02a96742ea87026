/**
 * Submissions refused before they became runs (bad signature, replay, unknown agent). The sender is
 * unauthenticated and no run exists, so nothing is written under a run's keys: refusals go to one
 * capped list, newest first.
 */
import type { Redis } from 'ioredis';
import type { Keys } from './keys.ts';

const KEPT = 10_000;

export class RefusalLog {
  constructor(
    private readonly redis: Redis,
    private readonly keys: Keys,
    private readonly clock: () => number = Date.now,
  ) {}

  async record(input: { runId: string; agent: string; reason: string }): Promise<void> {
    const entry = JSON.stringify({ at: new Date(this.clock()).toISOString(), ...input });
    await this.redis
      .multi()
      .lpush(this.keys.refused, entry)
      .ltrim(this.keys.refused, 0, KEPT - 1)
      .exec();
  }
}
