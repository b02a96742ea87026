/** What the audit reads about one run from Redis. */
import type { Redis } from 'ioredis';
import { CountersignError } from '../pipeline/index.ts';
import type { StoredRunState } from './audit-check.ts';
import type { JournalHead } from './journal.ts';
import { recordedHead } from './journal-reader.ts';
import type { Keys } from './keys.ts';

/** Everything the audit reads about one run. */
export interface RunEvidence extends StoredRunState {
  /** The stored journal records' texts, oldest first. */
  readonly records: string[];
  /** The head the run hash recorded, or null. */
  readonly head: JournalHead | null;
}

/** Reads a run's journal and stored state in one MULTI, so a concurrent commit cannot split them. */
export async function readRunEvidence(
  redis: Pick<Redis, 'multi'>,
  keys: Keys,
  runId: string,
): Promise<RunEvidence> {
  const runKeys = keys.forRun(runId);
  const replies = await redis
    .multi()
    .lrange(runKeys.journal, 0, -1)
    .hgetall(runKeys.run)
    .hgetall(runKeys.approvals)
    .get(runKeys.decision)
    .hgetall(runKeys.releases)
    .exec();
  if (replies === null)
    throw new CountersignError('redis_aborted', 'readRunEvidence: the transaction was aborted');
  for (const [error] of replies) if (error) throw error;
  const [[, list], [, run], [, approvals], [, decision], [, releases]] = replies as [
    [null, string[]],
    [null, Record<string, string>],
    [null, Record<string, string>],
    [null, string | null],
    [null, Record<string, string>],
  ];
  return {
    records: list,
    head: recordedHead(run.journal_seq, run.journal_head),
    run,
    approvals,
    decision,
    releases,
  };
}
