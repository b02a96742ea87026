/**
 * Reading what a run released before it was decided: what the gateway answers an agent that waits
 * for releases.
 * The release commits themselves write the `releases` hash (keys.ts); this module only reads.
 */
import type { Redis } from 'ioredis';
import { z } from 'zod';
import type { Release } from '../pipeline/index.ts';
import type { Keys } from './keys.ts';
import { parseJsonWith } from './stored-value.ts';

// Loose: the receipt covers every field, so whatever a release holds is handed on as stored.
const storedRelease = z.looseObject({
  kind: z.literal('release'),
  runId: z.string(),
  stepId: z.string(),
  releasedAt: z.string(),
  receipt: z.looseObject({ signature: z.string() }),
});

/**
 * The run's signed releases, oldest first (by `releasedAt`, then step id); empty when none. A stored
 * release that cannot be read is a fault of the store, and throws.
 */
export async function readReleases(redis: Redis, keys: Keys, runId: string): Promise<Release[]> {
  const hash = await redis.hgetall(keys.forRun(runId).releases);
  const releases = Object.entries(hash).map(([stepId, text]) => {
    const parsed = parseJsonWith(storedRelease, text);
    if (!parsed.ok || parsed.value.stepId !== stepId || parsed.value.runId !== runId) {
      throw new Error(
        `the stored release of step ${stepId} in run ${runId} cannot be read: ${parsed.ok ? 'it names another step or run' : parsed.message}`,
      );
    }
    return parsed.value as unknown as Release;
  });
  return releases.sort(
    (a, b) => a.releasedAt.localeCompare(b.releasedAt) || a.stepId.localeCompare(b.stepId),
  );
}
