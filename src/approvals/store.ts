/**
 * Reading a run from Redis: the run hash, its approvals and its current version, as one consistent
 * snapshot every transition decides on (writing is run-commit.ts).
 */
import type { Redis } from 'ioredis';
import { CountersignError, type Decision } from '../pipeline/index.ts';
import type { RunKeys } from './keys.ts';
import { timeReplyMs } from './redis-time.ts';
import type { ApprovalRecord, RunStatus, StepOutcome, StoredVersion } from './types.ts';

/** The run hash, parsed. Field names in Redis are snake_case. */
export interface RunFields {
  readonly agent: string;
  readonly status: RunStatus;
  readonly version: number;
  readonly createdAt: number;
  readonly expiresAt: number;
  readonly decidedBy?: string;
  readonly decidedAt?: number;
  readonly reason?: string;
  readonly recheckProblem?: string;
  readonly escalationLevel: number;
  readonly escalatedTo: readonly string[];
  /**
   * user → the levels that notified them. Absent on runs escalated before it was recorded: the levels
   * are then read from today's config (see `escalatedPeople`).
   */
  readonly escalatedLevels?: Readonly<Record<string, readonly number[]>>;
  /** When the latest escalation level fired (ms). */
  readonly escalatedAt?: number;
  /**
   * How far the current version's escalation chain has got: the last step that fired (recorded by the
   * transition that fired it). Absent before the first step, and on runs stored before it was kept.
   */
  readonly chainStep?: { readonly version: number; readonly step: string };
  /**
   * Steps released before the plan was decided: when, in which version, at which digest (the signed
   * releases themselves are in the run's `releases` hash). Absent or empty when none were.
   */
  readonly released?: Readonly<Record<string, ReleasedEntry>>;
  readonly journalSeq: number;
  readonly journalHead: string;
  readonly planDigest: string | null;
  readonly submissionDigest: string;
}

/** One released step as the run hash keeps it. */
export interface ReleasedEntry {
  /** ms since the epoch (Redis's time). */
  readonly at: number;
  readonly version: number;
  readonly digest: string;
}

/** A consistent read of one run: versions are immutable, so the run hash's `rev` pins everything. */
export interface RunSnapshot {
  /** `'0'` when the run does not exist. */
  readonly rev: string;
  readonly fields?: RunFields;
  /** Absent when the run does not exist, and for a plan refused as invalid (decided with no version). */
  readonly current?: StoredVersion;
  readonly approvals: readonly ApprovalRecord[];
  /** The agent's reports per step, as stored (`uncertain` is derived on read, not here). */
  readonly outcomes: Readonly<Record<string, StepOutcome>>;
  /** For a plan refused as invalid (no version to read): the decision it got. */
  readonly invalidDecision?: Decision;
}

/** Reads the run hash, its approvals and its current version. */
export async function loadRun(redis: Redis, keys: RunKeys): Promise<RunSnapshot> {
  return (await loadRunAt(redis, keys)).snapshot;
}

/**
 * The snapshot and Redis's `TIME` (ms), read in one MULTI: the time every transition decides at, the
 * same for all replicas whatever their own clocks say (docs/architecture.md §15).
 */
export async function loadRunAt(
  redis: Redis,
  keys: RunKeys,
): Promise<{ readonly snapshot: RunSnapshot; readonly redisNow: number }> {
  const results = await redis
    .multi()
    .time()
    .hgetall(keys.run)
    .hgetall(keys.approvals)
    .hgetall(keys.outcomes)
    .exec();
  const redisTime = results?.[0]?.[1] as string[] | undefined;
  if (redisTime === undefined)
    throw new CountersignError('redis_aborted', `${keys.run}: the read was aborted`);
  const hash = (results?.[1]?.[1] ?? {}) as Record<string, string>;
  const approvalHash = (results?.[2]?.[1] ?? {}) as Record<string, string>;
  const outcomeHash = (results?.[3]?.[1] ?? {}) as Record<string, string>;
  const outcomes = Object.fromEntries(
    Object.entries(outcomeHash).map(([stepId, text]) => [stepId, JSON.parse(text) as StepOutcome]),
  );
  return {
    snapshot: { ...(await snapshotOf(redis, keys, hash, approvalHash)), outcomes },
    redisNow: timeReplyMs(redisTime),
  };
}

async function snapshotOf(
  redis: Redis,
  keys: RunKeys,
  hash: Record<string, string>,
  approvalHash: Record<string, string>,
): Promise<Omit<RunSnapshot, 'outcomes'>> {
  if (hash.rev === undefined) return { rev: '0', approvals: [] };
  const fields = parseFields(hash);
  // A plan refused as invalid is decided without a version (version 0): the run has no plan to read.
  if (fields.version === 0) {
    const decision = await redis.get(keys.decision);
    return {
      rev: hash.rev,
      fields,
      approvals: [],
      ...(decision === null ? {} : { invalidDecision: JSON.parse(decision) as Decision }),
    };
  }
  const versionText = await redis.get(keys.version(fields.version));
  if (versionText === null)
    throw new CountersignError(
      'state_corrupt',
      `run hash ${keys.run} names version ${fields.version}, which is missing`,
    );
  const stored = Object.values(approvalHash).map((text) => JSON.parse(text) as StoredApproval);
  const current = JSON.parse(versionText) as StoredVersion;
  return {
    rev: hash.rev,
    fields,
    // Versions stored before step histories were kept get theirs read back once here.
    current:
      current.stepHistory === undefined
        ? { ...current, stepHistory: await loadStepHistory(redis, keys, current) }
        : current,
    approvals: stored.every(isBound) ? stored : await bindLegacyApprovals(redis, keys, stored),
  };
}

/** An approval as stored: records written before approvals were bound to step ids have no `stepId`. */
type StoredApproval = Omit<ApprovalRecord, 'stepId'> & { readonly stepId?: string };

function isBound(approval: StoredApproval): approval is ApprovalRecord {
  return approval.stepId !== undefined;
}

/**
 * Reads approvals stored before they were bound to step ids (no migration needed): such a record was
 * written by one click on version `v`, which approved every step of `v` the person could approve, so
 * it stands for the steps of `v` that had its digest — never for a step added later with the same bytes.
 */
async function bindLegacyApprovals(
  redis: Redis,
  keys: RunKeys,
  stored: readonly StoredApproval[],
): Promise<ApprovalRecord[]> {
  const versions = new Map<number, StoredVersion | undefined>();
  const bound: ApprovalRecord[] = [];
  for (const approval of stored) {
    if (isBound(approval)) {
      bound.push(approval);
      continue;
    }
    if (!versions.has(approval.version)) {
      versions.set(approval.version, await loadVersion(redis, keys, approval.version));
    }
    for (const step of versions.get(approval.version)?.plan.steps ?? []) {
      if (step.digest === approval.stepDigest) bound.push({ ...approval, stepId: step.id });
    }
  }
  return bound;
}

/**
 * Every step id used in the run up to `current`, with the digest it last had: kept on each version,
 * or for versions stored before that, read back from the versions themselves.
 */
export async function loadStepHistory(
  redis: Redis,
  keys: RunKeys,
  current: StoredVersion,
): Promise<Record<string, string>> {
  if (current.stepHistory !== undefined) return { ...current.stepHistory };
  const history: Record<string, string> = {};
  for (let n = 1; n < current.version; n++) {
    for (const step of (await loadVersion(redis, keys, n))?.plan.steps ?? []) history[step.id] = step.digest;
  }
  for (const step of current.plan.steps) history[step.id] = step.digest;
  return history;
}

/** Reads one stored version (versions are immutable once written). */
export async function loadVersion(
  redis: Redis,
  keys: RunKeys,
  version: number,
): Promise<StoredVersion | undefined> {
  const text = await redis.get(keys.version(version));
  return text === null ? undefined : (JSON.parse(text) as StoredVersion);
}

function parseFields(hash: Record<string, string>): RunFields {
  const optional = <T>(value: string | undefined, parse: (text: string) => T) =>
    value === undefined || value === '' ? undefined : parse(value);
  const decidedBy = optional(hash.decided_by, String);
  const decidedAt = optional(hash.decided_at, Number);
  const reason = optional(hash.reason, String);
  const recheckProblem = optional(hash.recheck_problem, String);
  const escalatedAt = optional(hash.escalated_at, Number);
  return {
    agent: hash.agent ?? '',
    status: (hash.status ?? 'pending') as RunStatus,
    version: Number(hash.version ?? 0),
    createdAt: Number(hash.created_at ?? 0),
    expiresAt: Number(hash.expires_at ?? 0),
    ...(decidedBy === undefined ? {} : { decidedBy }),
    ...(decidedAt === undefined ? {} : { decidedAt }),
    ...(reason === undefined ? {} : { reason }),
    ...(recheckProblem === undefined ? {} : { recheckProblem }),
    escalationLevel: Number(hash.escalation_level ?? 0),
    escalatedTo: JSON.parse(hash.escalated_to ?? '[]') as string[],
    ...(hash.escalated_levels === undefined
      ? {}
      : { escalatedLevels: JSON.parse(hash.escalated_levels) as Record<string, number[]> }),
    ...(escalatedAt === undefined ? {} : { escalatedAt }),
    ...(hash.chain_step === undefined || hash.chain_step === ''
      ? {}
      : { chainStep: JSON.parse(hash.chain_step) as { version: number; step: string } }),
    ...(hash.released === undefined
      ? {}
      : { released: JSON.parse(hash.released) as Record<string, ReleasedEntry> }),
    journalSeq: Number(hash.journal_seq ?? 0),
    journalHead: hash.journal_head ?? '',
    planDigest: optional(hash.plan_digest, String) ?? null,
    submissionDigest: hash.submission_digest ?? '',
  };
}
