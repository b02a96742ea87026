/** `export --since <date>`: JSONL, one line per `edited` record of the runs created since then. */
import type { Writable } from 'node:stream';
import type { Redis } from 'ioredis';
import { parseRecord, verifyJournal } from '../../src/approvals/journal.ts';
import type { Keys } from '../../src/approvals/keys.ts';
import { readRunEvidence } from '../../src/approvals/run-evidence.ts';
import type { JournalRecord } from '../../src/approvals/types.ts';
import { fromRedis } from './connection.ts';
import { describeFault, plural, writeLine } from './output.ts';
import { checkState } from './run-check.ts';

/** One line of `export`: an edit with the plans before and after it, as evaluation data. */
interface EditRow {
  readonly runId: string;
  readonly agent: string;
  readonly at: string;
  readonly editor: string;
  readonly baseVersion: number;
  readonly version: number;
  readonly before: unknown;
  readonly after: unknown;
  readonly diff: unknown;
}

function editRows(runId: string, records: readonly JournalRecord[]): EditRow[] {
  return records.flatMap(({ event, at }) =>
    event.type === 'edited'
      ? [
          {
            runId,
            agent: event.before.agent,
            at,
            editor: event.editor,
            baseVersion: event.baseVersion,
            version: event.version,
            before: event.before,
            after: event.after,
            diff: event.diff,
          },
        ]
      : [],
  );
}

/** How many run ids `export` reads per round trip. */
const EXPORT_PAGE = 200;

/**
 * Writes the edits of every run created since `since` to `out`, and a summary to `err`. A run whose
 * journal is broken or whose state disagrees with it is skipped (and said so): 1 then, else 0.
 */
export async function exportEdits(
  redis: Redis,
  keys: Keys,
  since: number,
  out: Writable,
  err: Writable,
): Promise<number> {
  let runs = 0;
  let edits = 0;
  let broken = 0;
  let disagreeing = 0;
  // Offset paging is safe here: new runs score higher than existing ones, so they only append.
  for (let offset = 0; ; offset += EXPORT_PAGE) {
    const runIds = await fromRedis(
      redis.zrangebyscore(keys.runs, since, '+inf', 'LIMIT', offset, EXPORT_PAGE),
    );
    for (const runId of runIds) {
      const evidence = await fromRedis(readRunEvidence(redis, keys, runId));
      const { records, head } = evidence;
      if (records.length === 0) continue; // the run's keys are gone (retention); nothing to export
      runs++;
      const result = verifyJournal(records, head ?? undefined);
      if (!result.ok) {
        broken++;
        err.write(`skipping run ${runId}: journal ${describeFault(result)}\n`);
        continue;
      }
      // A run whose state was written around the service is not evidence either.
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
      const parsed = records.flatMap((text) => {
        const one = parseRecord(text);
        return one.ok ? [one.record] : [];
      });
      for (const row of editRows(runId, parsed)) {
        edits++;
        await writeLine(out, `${JSON.stringify(row)}\n`);
      }
    }
    if (runIds.length < EXPORT_PAGE) break;
  }
  const skipped = [
    ...(broken === 0 ? [] : [`${broken} with a broken journal`]),
    ...(disagreeing === 0 ? [] : [`${disagreeing} whose state disagrees with its journal`]),
  ];
  const skippedNote = skipped.length === 0 ? '' : `; skipped ${skipped.join(', ')}`;
  err.write(
    `exported ${plural(edits, 'edit')} from ${plural(runs, 'run')} created since ${new Date(since).toISOString()}${skippedNote}\n`,
  );
  return skipped.length === 0 ? 0 : 1;
}
