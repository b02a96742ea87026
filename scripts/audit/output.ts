/** How the audit writes: its report lines, and output streams whose failures are `io` errors. */
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import type { StateCheck } from '../../src/approvals/audit-check.ts';
import { describeDecision } from '../../src/approvals/audit-findings.ts';
import type { JournalVerification } from '../../src/approvals/journal.ts';
import { AuditError, messageOf } from './audit-error.ts';

/** The cross-check's result: a summary (after "state of run X: " or "state: "), then one line per finding. */
export function describeState(check: StateCheck): string[] {
  const { findings } = check;
  if (findings.length > 0) {
    return [
      `DISAGREES with the journal, ${plural(findings.length, 'finding')}:`,
      ...findings.map((finding) => `  ${finding.code}: ${finding.message}`),
    ];
  }
  if (check.approvals === 0 && check.decision === null && check.status === null) {
    return ['OK, no approvals, decision or run status stored beside the journal'];
  }
  const checked = [
    check.approvals === 0 ? 'no approvals' : plural(check.approvals, 'approval'),
    check.decision === null ? 'no decision' : `decision ${describeDecision(check.decision)}`,
    check.status === null ? 'no run status' : `status ${check.status}`,
  ];
  return [`OK, ${checked.join(', ')}: each has its journal record`];
}

/** `BROKEN at record index 3 (seq 4): bad_hash: …` */
export function describeFault(result: Extract<JournalVerification, { ok: false }>): string {
  const seq = result.seq === null ? '' : ` (seq ${result.seq})`;
  return `BROKEN at record index ${result.index}${seq}: ${result.reason}: ${result.message}`;
}

/** Writes with backpressure; a failed output (a full disk, a closed pipe) becomes an `io` error. */
export async function writeLine(out: Writable, line: string): Promise<void> {
  try {
    if (out.errored) throw out.errored;
    if (!out.write(line)) await once(out, 'drain');
  } catch (error) {
    throw new AuditError(`cannot write the output: ${messageOf(error)}`, 'io');
  }
}

/** Ends `stream` and waits until it is written; a failure is an `io` error. */
export async function finish(stream: Writable): Promise<void> {
  try {
    if (stream.errored) throw stream.errored;
    stream.end();
    await once(stream, 'finish');
  } catch (error) {
    throw new AuditError(`cannot write the output: ${messageOf(error)}`, 'io');
  }
}

/** `1 run`, `2 runs`. */
export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
