/** `show <runId>`: the run's history, one line per record, then both checks' results. */
import type { Writable } from 'node:stream';
import type { Redis } from 'ioredis';
import { describeEvent } from '../../src/approvals/describe-event.ts';
import { parseRecord, verifyJournal } from '../../src/approvals/journal.ts';
import type { Keys } from '../../src/approvals/keys.ts';
import { describeFault, describeState } from './output.ts';
import { checkState, loadRun } from './run-check.ts';

/** Writes the history and the checks; 0 when both checks pass, 1 otherwise. */
export async function show(redis: Redis, keys: Keys, runId: string, out: Writable): Promise<number> {
  const evidence = await loadRun(redis, keys, runId);
  const { records, head } = evidence;
  out.write(`run ${runId}: ${records.length} journal records (times UTC)\n`);
  let day = '';
  for (const [index, text] of records.entries()) {
    const parsed = parseRecord(text);
    if (!parsed.ok) {
      out.write(`??:??:??  #?  unreadable record at index ${index}: ${parsed.message}\n`);
      continue;
    }
    const { record } = parsed;
    const recordDay = record.at.slice(0, 10);
    if (recordDay !== day) {
      day = recordDay;
      out.write(`${day}\n`);
    }
    out.write(`${record.at.slice(11, 19)}  #${record.seq}  ${describeEvent(record.event)}\n`);
  }
  const result = verifyJournal(records, head ?? undefined);
  out.write(result.ok ? `chain: OK, head ${result.head}\n` : `chain: ${describeFault(result)}\n`);
  const state = checkState(evidence);
  const [summary, ...lines] = describeState(state);
  out.write([`state: ${summary}`, ...lines, ''].join('\n'));
  return result.ok && state.findings.length === 0 ? 0 : 1;
}
