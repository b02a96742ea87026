/**
 * The runs created since a date whose journal verifies and whose state agrees with it, in creation
 * order — what `export` and `npm run insights` read. A run that fails either check is skipped and said
 * so on `err`: a run whose state was written around the service is not evidence.
 */
import type { Writable } from 'node:stream';
import type { Redis } from 'ioredis';
import { parseRecord, verifyJournal } from '../../src/approvals/journal.ts';
import type { Keys } from '../../src/approvals/keys.ts';
import { readRunEvidence } from '../../src/approvals/run-evidence.ts';
import type { JournalRecord } from '../../src/approvals/types.ts';
import { fromRedis } from './connection.ts';
import { describeFault } from './output.ts';
import { checkState } from './run-check.ts';

/** How many run ids are read per round trip. */
const PAGE = 200;

export interface VerifiedRuns {
  /** Runs with a journal. */
  readonly runs: number;
  readonly broken: number;
  readonly disagreeing: number;
  /** Runs created since then, read or not. */
  readonly total: number;
}

/** Calls `visit` with each verified run's parsed records, oldest first; `progress` after each page. */
export async function forEachVerifiedRun(
  redis: Redis,
  keys: Keys,
  since: number,
  err: Writable,
  visit: (runId: string, records: readonly JournalRecord[]) => Promise<void> | void,
  progress?: (read: number, total: number) => void,
): Promise<VerifiedRuns> {
  let runs = 0;
  let broken = 0;
  let disagreeing = 0;
  let read = 0;
  const total = await fromRedis(redis.zcount(keys.runs, since, '+inf'));
  // Offset paging is safe here: new runs score higher than existing ones, so they only append.
  for (let offset = 0; ; offset += PAGE) {
    const runIds = await fromRedis(redis.zrangebyscore(keys.runs, since, '+inf', 'LIMIT', offset, PAGE));
    for (const runId of runIds) {
      read++;
      const evidence = await fromRedis(readRunEvidence(redis, keys, runId));
      const { records, head } = evidence;
      if (records.length === 0) continue; // the run's keys are gone (retention)
      runs++;
      const result = verifyJournal(records, head ?? undefined);
      if (!result.ok) {
        broken++;
        err.write(`skipping run ${runId}: journal ${describeFault(result)}\n`);
        continue;
      }
      const { findings } = checkState(evidence);
      const [first] = findings;
      if (first !== undefined) {
        disagreeing++;
        const more =
          findings.length === 1
            ? ''
            : ` (+${findings.length - 1} more; see \`npm run audit -- verify ${runId}\`)`;
        err.write(
          `skipping run ${runId}: state DISAGREES with the journal: ${first.code}: ${first.message}${more}\n`,
        );
        continue;
      }
      // verifyJournal parsed every record already, so these parses succeed.
      await visit(
        runId,
        records.flatMap((text) => {
          const one = parseRecord(text);
          return one.ok ? [one.record] : [];
        }),
      );
    }
    progress?.(read, Math.max(total, read));
    if (runIds.length < PAGE) break;
  }
  return { runs, broken, disagreeing, total };
}

/** "; skipped 2 with a broken journal", or nothing. */
export function skippedNote(result: VerifiedRuns): string {
  const skipped = [
    ...(result.broken === 0 ? [] : [`${result.broken} with a broken journal`]),
    ...(result.disagreeing === 0 ? [] : [`${result.disagreeing} whose state disagrees with its journal`]),
  ];
  return skipped.length === 0 ? '' : `; skipped ${skipped.join(', ')}`;
}
