/** `export --since <date>`: JSONL, one line per `edited` record of the runs created since then. */
import type { Writable } from 'node:stream';
import type { Redis } from 'ioredis';
import type { Keys } from '../../src/approvals/keys.ts';
import type { JournalRecord } from '../../src/approvals/types.ts';
import { plural, writeLine } from './output.ts';
import { forEachVerifiedRun, skippedNote } from './verified-runs.ts';

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
  let edits = 0;
  const result = await forEachVerifiedRun(redis, keys, since, err, async (runId, records) => {
    for (const row of editRows(runId, records)) {
      edits++;
      await writeLine(out, `${JSON.stringify(row)}\n`);
    }
  });
  err.write(
    `exported ${plural(edits, 'edit')} from ${plural(result.runs, 'run')} created since ${new Date(since).toISOString()}${skippedNote(result)}\n`,
  );
  return result.broken + result.disagreeing === 0 ? 0 : 1;
}
