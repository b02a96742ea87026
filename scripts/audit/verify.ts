/** `verify <runId>`: the run's hash chain, then its stored state against the journal. */
import type { Writable } from 'node:stream';
import type { Redis } from 'ioredis';
import { verifyJournal } from '../../src/approvals/journal.ts';
import type { Keys } from '../../src/approvals/keys.ts';
import { describeFault, describeState } from './output.ts';
import { checkState, loadRun } from './run-check.ts';

/** Writes both checks' results; 0 when both pass, 1 otherwise. */
export async function verify(redis: Redis, keys: Keys, runId: string, out: Writable): Promise<number> {
  const evidence = await loadRun(redis, keys, runId);
  const { records, head } = evidence;
  const result = verifyJournal(records, head ?? undefined);
  if (result.ok) {
    const anchored = head === null ? ' (the run records no head: a truncated tail would go unnoticed)' : '';
    out.write(`journal of run ${runId}: OK, ${result.count} records, head ${result.head}${anchored}\n`);
  } else {
    out.write(`journal of run ${runId}: ${describeFault(result)}\n`);
  }
  // Checked even when the chain is broken: a forged approval is worth naming either way.
  const state = checkState(evidence);
  const [summary, ...lines] = describeState(state);
  out.write([`state of run ${runId}: ${summary}`, ...lines, ''].join('\n'));
  return result.ok && state.findings.length === 0 ? 0 : 1;
}
