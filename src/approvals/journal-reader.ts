/** Reads a run's journal, and the head its run hash recorded, from Redis (journal.ts: the records). */
import type { Redis } from 'ioredis';
import { CountersignError } from '../pipeline/index.ts';
import type { JournalHead } from './journal.ts';
import type { Keys } from './keys.ts';

/** The run's stored journal records, oldest first (empty when the run has none). */
export async function readJournal(
  redis: Pick<Redis, 'lrange'>,
  keys: Keys,
  runId: string,
): Promise<string[]> {
  return redis.lrange(keys.forRun(runId).journal, 0, -1);
}

/**
 * The stored records and the head the run hash recorded, read in one MULTI so a concurrent append
 * cannot make them disagree. `head` is null when the run hash records none.
 */
export async function readJournalWithHead(
  redis: Pick<Redis, 'multi'>,
  keys: Keys,
  runId: string,
): Promise<{ readonly records: string[]; readonly head: JournalHead | null }> {
  const runKeys = keys.forRun(runId);
  const replies = await redis
    .multi()
    .lrange(runKeys.journal, 0, -1)
    .hmget(runKeys.run, 'journal_seq', 'journal_head')
    .exec();
  if (replies === null)
    throw new CountersignError('redis_aborted', 'readJournalWithHead: the transaction was aborted');
  const [[listError, list] = [], [hashError, fields] = []] = replies;
  if (listError) throw listError;
  if (hashError) throw hashError;
  // LRANGE answers a list of strings, HMGET one string or null per field asked.
  const records = list as string[];
  const [seqText, hash] = fields as [string | null, string | null];
  return { records, head: recordedHead(seqText, hash) };
}

/**
 * The head the run hash records in `journal_seq` / `journal_head` (as stored), or null when it records
 * none: the service writes journal_seq 0 and an empty head before the first record.
 */
export function recordedHead(
  seqText: string | null | undefined,
  hash: string | null | undefined,
): JournalHead | null {
  const seq = Number(seqText);
  return typeof seqText === 'string' && typeof hash === 'string' && Number.isSafeInteger(seq) && seq > 0
    ? { seq, hash }
    : null;
}
