/**
 * The audit's cross-check of a run's stored state against its journal (docs/journal.md). The service
 * writes every approval, the decision and the decided status in the same commit as the journal record
 * that says so; an approvals entry, a decision or a status with no such record was written by
 * something else (issue 11 §3: approvals HSET straight into Redis).
 *
 * Like the chain, this is no proof against someone who controls Redis: they can write the journal
 * records too. It catches state written around the service.
 *
 * Pure, plus one thin reader at the bottom.
 */
import type { Redis } from 'ioredis';
import { z } from 'zod';
import type { DecisionStatus } from '../pipeline/index.ts';
import { CountersignError } from '../pipeline/index.ts';
import type { JournalHead } from './journal.ts';
import { recordedHead } from './journal-reader.ts';
import type { Keys } from './keys.ts';
import type { JournalRecord } from './types.ts';

/** What kind of disagreement a finding reports. */
export type StateFindingCode =
  /** A journal record this check reads (approval, version, decision) lacks the fields its type has. */
  | 'event_unreadable'
  | 'approval_unreadable'
  /** An approvals-hash entry that no `approval` journal record accounts for. */
  | 'approval_without_record'
  | 'decision_unreadable'
  /** The stored decision's status / version / decidedBy matches no decision record in the journal. */
  | 'decision_without_record'
  /** An approval the decision counts that no `approval` journal record accounts for. */
  | 'decision_approval_without_record'
  /** The run hash's status / decided_by disagrees with the journal's decision record (or its absence). */
  | 'status_without_record'
  /** The journal records more than one decision: the service writes one at most. */
  | 'conflicting_decisions';

export interface StateFinding {
  readonly code: StateFindingCode;
  /** One line naming the field and the user / step, for people. */
  readonly message: string;
}

/** A run's stored state, as Redis holds it (nothing parsed yet: any of it may have been written by hand). */
export interface StoredRunState {
  /** The run hash (`<prefix>:{R}:run`); empty when absent. */
  readonly run: Readonly<Record<string, string>>;
  /** The approvals hash: field → approval JSON. */
  readonly approvals: Readonly<Record<string, string>>;
  /** The stored decision's text, or null. */
  readonly decision: string | null;
}

/** A decision as the check read it (stored or journalled). */
export interface DecisionSummary {
  readonly status: DecisionStatus;
  readonly version: number | null;
  readonly by: string | null;
  /** The approved plan's digest (approvals only; null otherwise). */
  readonly planDigest: string | null;
}

/** The outcome of {@link checkRunState}: findings (none when the state agrees), and what was checked. */
export interface StateCheck {
  readonly findings: readonly StateFinding[];
  /** Entries in the approvals hash. */
  readonly approvals: number;
  /** The stored decision, when there is a readable one. */
  readonly decision: DecisionSummary | null;
  /** The run hash's status, or null when there is no run hash the service wrote (no `rev`). */
  readonly status: string | null;
}

/**
 * Checks a run's stored approvals, decision and status against its journal records (the ones that
 * parse; the chain check is `verifyJournal`'s job). Reports, in this order:
 * - each journal record it reads (approvals, versions, decisions) that lacks its type's fields;
 * - each approvals entry with no `approval` record by the same user at the same version that names
 *   its step id and digest (an entry without a step id, written before approvals were bound to step
 *   ids, needs a record whose `stepDigests` holds its digest);
 * - each approval the decision counts with no `approval` record by that user, at its version or an
 *   earlier one, naming the step's id at the step's digest (a `stepDigests` record: the digest, held
 *   by that step id in the record's version);
 * - an unreadable decision, or one whose status, version, decidedBy (and plan digest, when approved)
 *   no decision record has;
 * - a run-hash status or decided_by that disagrees with the journal's decision record;
 * - more than one decision record.
 *
 * @example
 * const check = checkRunState(records, { run, approvals, decision });
 * for (const finding of check.findings) console.log(`${finding.code}: ${finding.message}`);
 */
export function checkRunState(records: readonly JournalRecord[], state: StoredRunState): StateCheck {
  const journal = journalFacts(records);
  const findings: StateFinding[] = [...journal.findings];
  findings.push(...checkApprovals(state.approvals, journal));
  const decision = readDecision(state.decision);
  if (!decision.ok) findings.push(finding('decision_unreadable', decision.message));
  else if (decision.value !== null) findings.push(...checkDecision(decision.value, journal));
  const status = state.run.rev === undefined ? null : (state.run.status ?? 'pending');
  if (status !== null) findings.push(...checkStatus(status, nonEmpty(state.run.decided_by), journal));
  if (journal.decisions.length > 1) {
    findings.push(
      finding(
        'conflicting_decisions',
        `the journal records ${journal.decisions.length} decisions: ${journal.decisions.map(describeRecorded).join('; ')}`,
      ),
    );
  }
  return {
    findings,
    approvals: Object.keys(state.approvals).length,
    decision: decision.ok && decision.value !== null ? summaryOf(decision.value) : null,
    status,
  };
}

// ── the journal as evidence ──────────────────────────────────────────────────────────────────────

interface JournalledApproval {
  readonly userId: string;
  readonly version: number;
  readonly steps: readonly { readonly id: string; readonly digest: string }[];
  /** Legacy records: digests only. */
  readonly stepDigests: readonly string[];
}

interface RecordedDecision extends DecisionSummary {
  readonly seq: number;
}

interface JournalFacts {
  readonly approvals: readonly JournalledApproval[];
  /** version → step id → digest, from the `validated` and `edited` records. */
  readonly versions: ReadonlyMap<number, ReadonlyMap<string, string>>;
  readonly decisions: readonly RecordedDecision[];
  readonly findings: readonly StateFinding[];
}

const stepRef = z.looseObject({ id: z.string(), digest: z.string() });
const version = z.int().min(0);

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
]);

const READ_TYPES: ReadonlySet<string> = new Set([
  'approval',
  'validated',
  'edited',
  'approved',
  'rejected',
  'expired',
  'invalid',
]);

function journalFacts(records: readonly JournalRecord[]): JournalFacts {
  const approvals: JournalledApproval[] = [];
  const versions = new Map<number, Map<string, string>>();
  const decisions: RecordedDecision[] = [];
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
    }
  }
  return { approvals, versions, decisions, findings };
}

// ── approvals ────────────────────────────────────────────────────────────────────────────────────

const storedApproval = z.looseObject({
  stepId: z.string().optional(),
  stepDigest: z.string(),
  userId: z.string(),
  version,
  at: z.number(),
});

function checkApprovals(stored: Readonly<Record<string, string>>, journal: JournalFacts): StateFinding[] {
  const findings: StateFinding[] = [];
  // Sorted: HGETALL's order is Redis's, and a report should read the same twice.
  for (const field of Object.keys(stored).sort()) {
    const parsed = parseJsonWith(storedApproval, stored[field] ?? '');
    if (!parsed.ok) {
      findings.push(
        finding(
          'approval_unreadable',
          `approvals field ${JSON.stringify(field)} is not an approval: ${parsed.message}`,
        ),
      );
      continue;
    }
    const approval = parsed.value;
    const { stepId, stepDigest, userId } = approval;
    const recorded = journal.approvals.some(
      (record) =>
        record.userId === userId &&
        record.version === approval.version &&
        (stepId === undefined
          ? record.stepDigests.includes(stepDigest)
          : record.steps.some((step) => step.id === stepId && step.digest === stepDigest)),
    );
    if (recorded) continue;
    const what =
      stepId === undefined
        ? `${describeLegacyStep(stepDigest, journal.versions.get(approval.version))}, a record without a step id,`
        : `step ${shown(stepId)} (digest ${short(stepDigest)})`;
    findings.push(
      finding(
        'approval_without_record',
        `approval by ${shown(userId)} of ${what} at version ${approval.version} has no journal record (approvals field ${JSON.stringify(field)})`,
      ),
    );
  }
  return findings;
}

/** The steps a legacy approval stands for: those of its version with its digest (store.ts binds it so). */
function describeLegacyStep(digest: string, steps: ReadonlyMap<string, string> | undefined): string {
  const ids = [...(steps ?? [])].flatMap(([id, stepDigest]) => (stepDigest === digest ? [id] : []));
  return ids.length === 0
    ? `digest ${short(digest)}`
    : `step ${ids.map(shown).join(', ')} (digest ${short(digest)})`;
}

// ── the decision ─────────────────────────────────────────────────────────────────────────────────

const storedDecision = z.looseObject({
  status: z.enum(['approved', 'rejected', 'expired', 'invalid']),
  version: version.nullable(),
  decidedBy: z.string().nullable(),
  plan: z
    .looseObject({
      digest: z.string(),
      steps: z.array(
        z.looseObject({
          id: z.string(),
          digest: z.string(),
          approvals: z.array(z.looseObject({ userId: z.string(), at: z.string() })),
        }),
      ),
    })
    .nullable(),
});

type StoredDecision = z.infer<typeof storedDecision>;

function readDecision(
  text: string | null,
): { ok: true; value: StoredDecision | null } | { ok: false; message: string } {
  if (text === null) return { ok: true, value: null };
  const parsed = parseJsonWith(storedDecision, text);
  return parsed.ok
    ? parsed
    : { ok: false, message: `the stored decision is not a decision: ${parsed.message}` };
}

function checkDecision(decision: StoredDecision, journal: JournalFacts): StateFinding[] {
  const findings: StateFinding[] = [];
  const upTo = decision.version ?? Number.POSITIVE_INFINITY;
  for (const step of decision.plan?.steps ?? []) {
    for (const { userId, at } of step.approvals) {
      const recorded = journal.approvals.some(
        (record) =>
          record.userId === userId &&
          record.version <= upTo &&
          (record.steps.some((ref) => ref.id === step.id && ref.digest === step.digest) ||
            (record.stepDigests.includes(step.digest) &&
              legacyBindsTo(journal.versions.get(record.version), step))),
      );
      if (recorded) continue;
      findings.push(
        finding(
          'decision_approval_without_record',
          `the decision counts an approval by ${shown(userId)} of step ${shown(step.id)} (digest ${short(step.digest)}) at ${shown(at)} that has no journal record`,
        ),
      );
    }
  }
  const recorded = journal.decisions.some(
    (record) =>
      record.status === decision.status &&
      record.version === decision.version &&
      record.by === decision.decidedBy &&
      record.planDigest === summaryOf(decision).planDigest,
  );
  if (!recorded) {
    findings.push(
      finding(
        'decision_without_record',
        `the stored decision (${describeDecision(summaryOf(decision))}) has no journal record: ${describeJournalled(journal)}`,
      ),
    );
  }
  return findings;
}

/**
 * Whether a legacy (digest-only) approval of a version stands for `step`: that version had the step's
 * id at its digest. A journal without the version's record cannot say; the digest then decides.
 */
function legacyBindsTo(
  steps: ReadonlyMap<string, string> | undefined,
  step: { readonly id: string; readonly digest: string },
): boolean {
  return steps === undefined || steps.get(step.id) === step.digest;
}

// ── the run hash ─────────────────────────────────────────────────────────────────────────────────

function checkStatus(status: string, decidedBy: string | undefined, journal: JournalFacts): StateFinding[] {
  const by = decidedBy === undefined ? '' : ` (decided by ${shown(decidedBy)})`;
  if (status === 'pending') {
    if (journal.decisions.length === 0) return [];
    return [
      finding(
        'status_without_record',
        `the run hash says status pending${by}, but ${describeJournalled(journal)}`,
      ),
    ];
  }
  const recorded = journal.decisions.some(
    (record) => record.status === status && (record.by ?? undefined) === decidedBy,
  );
  if (recorded) return [];
  return [
    finding(
      'status_without_record',
      `the run hash says status ${shown(status)}${by}, which has no journal record: ${describeJournalled(journal)}`,
    ),
  ];
}

// ── helpers ──────────────────────────────────────────────────────────────────────────────────────

function summaryOf(decision: StoredDecision): DecisionSummary {
  const planDigest = decision.status === 'approved' ? (decision.plan?.digest ?? null) : null;
  return { status: decision.status, version: decision.version, by: decision.decidedBy, planDigest };
}

/** `approved v2 by U0FIN3 (plan 6f7ac9167e16…)`, `expired v1 by timer`, `invalid`. */
export function describeDecision(decision: DecisionSummary): string {
  const version = decision.version === null ? '' : ` v${decision.version}`;
  const by = decision.by === null ? '' : ` by ${shown(decision.by)}`;
  const plan = decision.planDigest === null ? '' : ` (plan ${short(decision.planDigest)})`;
  return `${decision.status}${version}${by}${plan}`;
}

function describeRecorded(decision: RecordedDecision): string {
  return `${describeDecision(decision)} (#${decision.seq})`;
}

function describeJournalled(journal: JournalFacts): string {
  const { decisions } = journal;
  if (decisions.length === 0) return 'the journal records no decision';
  return `the journal records ${decisions.map(describeRecorded).join('; ')}`;
}

function short(digest: string): string {
  return `${shown(digest.slice(0, 12))}…`;
}

/**
 * A stored value inside a message: as it is when it looks like an id, else JSON-quoted, so a value
 * written by hand (a user id with spaces or a line break) cannot blur or forge a report line.
 */
function shown(text: string): string {
  return /^[\w.:@+-]{1,100}$/.test(text) ? text : JSON.stringify(text);
}

/** A finding whose message is one line whatever went into it (parser messages quote stored text). */
function finding(code: StateFindingCode, message: string): StateFinding {
  const escaped = message.replace(
    /[\p{Cc}\p{Zl}\p{Zp}]/gu,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return { code, message: escaped };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

type Parsed<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly message: string };

function parseWith<T>(schema: z.ZodType<T>, value: unknown): Parsed<T> {
  const result = schema.safeParse(value);
  if (result.success) return { ok: true, value: result.data };
  const issue = result.error.issues[0];
  const where = issue && issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
  return { ok: false, message: `${where}${issue?.message ?? 'invalid'}` };
}

function parseJsonWith<T>(schema: z.ZodType<T>, text: string): Parsed<T> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, message: `not JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
  return parseWith(schema, value);
}

// ── reader ───────────────────────────────────────────────────────────────────────────────────────

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
    .exec();
  if (replies === null)
    throw new CountersignError('redis_aborted', 'readRunEvidence: the transaction was aborted');
  for (const [error] of replies) if (error) throw error;
  const [[, list], [, run], [, approvals], [, decision]] = replies as [
    [null, string[]],
    [null, Record<string, string>],
    [null, Record<string, string>],
    [null, string | null],
  ];
  return {
    records: list,
    head: recordedHead(run.journal_seq, run.journal_head),
    run,
    approvals,
    decision,
  };
}
