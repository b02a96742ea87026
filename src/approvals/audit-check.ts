/**
 * The audit's cross-check of a run's stored state against its journal (docs/journal.md). The service
 * writes every approval, the decision and the decided status in the same commit as the journal record
 * that says so; an approvals entry, a decision or a status with no such record was written by
 * something else (issue 11 §3: approvals HSET straight into Redis).
 *
 * Like the chain, this is no proof against someone who controls Redis: they can write the journal
 * records too. It catches state written around the service.
 *
 * Pure: run-evidence.ts reads the state from Redis, audit-journal-facts.ts what the journal says.
 */
import { z } from 'zod';
import {
  type DecisionSummary,
  describeDecision,
  finding,
  type StateFinding,
  short,
  shown,
} from './audit-findings.ts';
import {
  describeJournalled,
  describeRecorded,
  type JournalFacts,
  journalFacts,
  version,
} from './audit-journal-facts.ts';
import { parseJsonWith } from './stored-value.ts';
import type { JournalRecord } from './types.ts';

/** A run's stored state, as Redis holds it (nothing parsed yet: any of it may have been written by hand). */
export interface StoredRunState {
  /** The run hash (`<prefix>:{R}:run`); empty when absent. */
  readonly run: Readonly<Record<string, string>>;
  /** The approvals hash: field → approval JSON. */
  readonly approvals: Readonly<Record<string, string>>;
  /** The stored decision's text, or null. */
  readonly decision: string | null;
  /** The releases hash: step id → signed release JSON (absent: read as none). */
  readonly releases?: Readonly<Record<string, string>>;
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
 * - more than one decision record;
 * - each signed release with no `released` record naming its step, version and the step's digest.
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
  findings.push(...checkReleases(state.releases ?? {}, journal));
  return {
    findings,
    approvals: Object.keys(state.approvals).length,
    decision: decision.ok && decision.value !== null ? summaryOf(decision.value) : null,
    status,
  };
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

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

// ── releases ─────────────────────────────────────────────────────────────────────────────────────

const storedRelease = z.looseObject({
  kind: z.literal('release'),
  stepId: z.string(),
  version,
  plan: z.looseObject({ steps: z.array(z.looseObject({ id: z.string(), digest: z.string() })) }),
});

/** Each signed release must have its `released` record: the service writes both in one commit. */
function checkReleases(stored: Readonly<Record<string, string>>, journal: JournalFacts): StateFinding[] {
  const findings: StateFinding[] = [];
  for (const field of Object.keys(stored).sort()) {
    const parsed = parseJsonWith(storedRelease, stored[field] ?? '');
    if (!parsed.ok || parsed.value.stepId !== field) {
      const why = parsed.ok ? `it releases ${shown(parsed.value.stepId)}` : parsed.message;
      findings.push(
        finding(
          'release_unreadable',
          `releases field ${JSON.stringify(field)} is not its step's release: ${why}`,
        ),
      );
      continue;
    }
    const release = parsed.value;
    const digest = release.plan.steps.find((step) => step.id === release.stepId)?.digest;
    const recorded = journal.releases.some(
      (record) =>
        record.stepId === release.stepId && record.version === release.version && record.digest === digest,
    );
    if (!recorded) {
      findings.push(
        finding(
          'release_without_record',
          `the release of step ${shown(release.stepId)} at version ${release.version} has no journal record`,
        ),
      );
    }
  }
  return findings;
}
