/**
 * The journal as the audit's evidence: the approvals, the steps of each version and the decisions its
 * records hold (the records of the types the check reads).
 */
import { z } from 'zod';
import { type DecisionSummary, describeDecision, finding, type StateFinding } from './audit-findings.ts';
import { parseWith } from './stored-value.ts';
import type { JournalRecord } from './types.ts';

/** An `approval` record: who approved which steps of which version. */
export interface JournalledApproval {
  readonly userId: string;
  readonly version: number;
  readonly steps: readonly { readonly id: string; readonly digest: string }[];
  /** Legacy records: digests only. */
  readonly stepDigests: readonly string[];
}

/** A `released` record: which step of which version, at which digest. */
export interface JournalledRelease {
  readonly stepId: string;
  readonly version: number;
  readonly digest: string;
}

/** A decision record, with its seq for messages. */
export interface RecordedDecision extends DecisionSummary {
  readonly seq: number;
}

/** What the journal says, and the records it could not read. */
export interface JournalFacts {
  readonly approvals: readonly JournalledApproval[];
  /** version → step id → digest, from the `validated` and `edited` records. */
  readonly versions: ReadonlyMap<number, ReadonlyMap<string, string>>;
  readonly decisions: readonly RecordedDecision[];
  readonly releases: readonly JournalledRelease[];
  readonly findings: readonly StateFinding[];
}

const stepRef = z.looseObject({ id: z.string(), digest: z.string() });
/** A plan version, as records and the stored state write it. */
export const version = z.int().min(0);

/** The events this check reads, with the fields it reads; records of other types are passed over. */
const readEvent = z.discriminatedUnion('type', [
  z.looseObject({
    type: z.literal('approval'),
    userId: z.string(),
    version,
    steps: z.array(stepRef).optional(),
    stepDigests: z.array(z.string()).optional(),
  }),
  z.looseObject({ type: z.literal('validated'), version, steps: z.array(stepRef) }),
  z.looseObject({ type: z.literal('edited'), version, after: z.looseObject({ steps: z.array(stepRef) }) }),
  z.looseObject({ type: z.literal('approved'), version, planDigest: z.string(), by: z.string() }),
  z.looseObject({ type: z.literal('rejected'), version, userId: z.string() }),
  z.looseObject({ type: z.literal('expired'), version }),
  z.looseObject({ type: z.literal('invalid') }),
  z.looseObject({ type: z.literal('released'), stepId: z.string(), version, digest: z.string() }),
]);

const READ_TYPES: ReadonlySet<string> = new Set([
  'approval',
  'validated',
  'edited',
  'approved',
  'rejected',
  'expired',
  'invalid',
  'released',
]);

/** Reads what the records say; an unreadable record of a type it reads becomes an `event_unreadable` finding. */
export function journalFacts(records: readonly JournalRecord[]): JournalFacts {
  const approvals: JournalledApproval[] = [];
  const versions = new Map<number, Map<string, string>>();
  const decisions: RecordedDecision[] = [];
  const releases: JournalledRelease[] = [];
  const findings: StateFinding[] = [];
  for (const { seq, event: raw } of records) {
    if (!READ_TYPES.has(raw.type)) continue;
    const parsed = parseWith(readEvent, raw);
    if (!parsed.ok) {
      findings.push(
        finding(
          'event_unreadable',
          `journal record #${seq} (${raw.type}) is not a readable ${raw.type} event: ${parsed.message}`,
        ),
      );
      continue;
    }
    const event = parsed.value;
    switch (event.type) {
      case 'approval':
        approvals.push({
          userId: event.userId,
          version: event.version,
          steps: event.steps ?? [],
          stepDigests: event.stepDigests ?? [],
        });
        break;
      case 'validated':
        versions.set(event.version, new Map(event.steps.map((step) => [step.id, step.digest])));
        break;
      case 'edited':
        versions.set(event.version, new Map(event.after.steps.map((step) => [step.id, step.digest])));
        break;
      case 'approved':
        decisions.push({
          seq,
          status: 'approved',
          version: event.version,
          by: event.by,
          planDigest: event.planDigest,
        });
        break;
      case 'rejected':
        decisions.push({
          seq,
          status: 'rejected',
          version: event.version,
          by: event.userId,
          planDigest: null,
        });
        break;
      case 'expired':
        decisions.push({ seq, status: 'expired', version: event.version, by: 'timer', planDigest: null });
        break;
      case 'invalid':
        decisions.push({ seq, status: 'invalid', version: null, by: null, planDigest: null });
        break;
      case 'released':
        releases.push({ stepId: event.stepId, version: event.version, digest: event.digest });
        break;
    }
  }
  return { approvals, versions, decisions, releases, findings };
}

/** `approved v2 by U0FIN3 (plan 6f7ac9167e16…) (#7)`. */
export function describeRecorded(decision: RecordedDecision): string {
  return `${describeDecision(decision)} (#${decision.seq})`;
}

/** The decisions the journal records, for a finding that the stored state disagrees with them. */
export function describeJournalled(journal: JournalFacts): string {
  const { decisions } = journal;
  if (decisions.length === 0) return 'the journal records no decision';
  return `the journal records ${decisions.map(describeRecorded).join('; ')}`;
}
