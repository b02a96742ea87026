/** One run read for a command, and its stored state checked against its journal. */
import type { Redis } from 'ioredis';
import { checkRunState, type StateCheck } from '../../src/approvals/audit-check.ts';
import { parseRecord } from '../../src/approvals/journal.ts';
import type { Keys } from '../../src/approvals/keys.ts';
import { type RunEvidence, readRunEvidence } from '../../src/approvals/run-evidence.ts';
import { AuditError } from './audit-error.ts';
import { fromRedis } from './connection.ts';

/** Reads one run's journal and stored state, or fails with "no journal for run X". */
export async function loadRun(redis: Redis, keys: Keys, runId: string): Promise<RunEvidence> {
  const evidence = await fromRedis(readRunEvidence(redis, keys, runId));
  if (evidence.records.length === 0) throw new AuditError(`no journal for run ${runId}`, 'not_found');
  return evidence;
}

/** The journal's records that parse (the chain check reports the others), checked against the state. */
export function checkState(evidence: RunEvidence): StateCheck {
  const records = evidence.records.flatMap((text) => {
    const parsed = parseRecord(text);
    return parsed.ok ? [parsed.record] : [];
  });
  return checkRunState(records, evidence);
}
