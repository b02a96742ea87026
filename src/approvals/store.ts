import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';
import { appendRecord } from './journal.ts';
import type { RunKeys } from './keys.ts';
import type { ApprovalRecord, JournalEvent, RunStatus, StoredVersion } from './types.ts';

const COMMIT_LUA = readFileSync(new URL('./lua/commit.lua', import.meta.url), 'utf8');

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
  readonly journalSeq: number;
  readonly journalHead: string;
  readonly planDigest: string | null;
  readonly submissionDigest: string;
}

/** A consistent read of one run: versions are immutable, so the run hash's `rev` pins everything. */
export interface RunSnapshot {
  /** `'0'` when the run does not exist. */
  readonly rev: string;
  readonly fields?: RunFields;
  /** Absent when the run does not exist, and for a plan refused as invalid (decided with no version). */
  readonly current?: StoredVersion;
  readonly approvals: readonly ApprovalRecord[];
}

type CommitRedis = Redis & {
  csCommit(keyCount: number, ...args: string[]): Promise<[number, string]>;
};

/** Registers the commit script on a connection (idempotent). */
function withCommit(redis: Redis): CommitRedis {
  const candidate = redis as CommitRedis;
  if (typeof candidate.csCommit !== 'function') redis.defineCommand('csCommit', { lua: COMMIT_LUA });
  return candidate;
}

/** Reads the run hash, its approvals and its current version. */
export async function loadRun(redis: Redis, keys: RunKeys): Promise<RunSnapshot> {
  const results = await redis.multi().hgetall(keys.run).hgetall(keys.approvals).exec();
  const hash = (results?.[0]?.[1] ?? {}) as Record<string, string>;
  const approvalHash = (results?.[1]?.[1] ?? {}) as Record<string, string>;
  if (hash.rev === undefined) return { rev: '0', approvals: [] };
  const fields = parseFields(hash);
  // A plan refused as invalid is decided without a version (version 0): the run has no plan to read.
  if (fields.version === 0) return { rev: hash.rev, fields, approvals: [] };
  const versionText = await redis.get(keys.version(fields.version));
  if (versionText === null)
    throw new Error(`run hash ${keys.run} names version ${fields.version}, which is missing`);
  const stored = Object.values(approvalHash).map((text) => JSON.parse(text) as StoredApproval);
  return {
    rev: hash.rev,
    fields,
    current: JSON.parse(versionText) as StoredVersion,
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
    journalSeq: Number(hash.journal_seq ?? 0),
    journalHead: hash.journal_head ?? '',
    planDigest: optional(hash.plan_digest, String) ?? null,
    submissionDigest: hash.submission_digest ?? '',
  };
}

/** The run-hash fields a transition may set, in their Redis spelling. */
export interface RunFieldUpdate {
  agent?: string;
  status?: RunStatus;
  version?: number;
  created_at?: number;
  expires_at?: number;
  decided_by?: string;
  decided_at?: number;
  reason?: string;
  /** '' clears it. */
  recheck_problem?: string;
  escalation_level?: number;
  escalated_to?: readonly string[];
  escalated_levels?: Readonly<Record<string, readonly number[]>>;
  escalated_at?: number;
  plan_digest?: string;
  submission_digest?: string;
}

/**
 * Collects the writes of one transition and commits them atomically with compare-and-set on the run's
 * `rev`. Journal records are chained here, from the head the snapshot was read with.
 */
export class RunCommit {
  private readonly ops: (string | number)[][] = [];
  private readonly keyIndex = new Map<string, number>();
  private readonly runUpdate: Record<string, string> = {};
  private journalSeq: number;
  private journalHead: string;
  private publication: [string, string] | undefined;

  constructor(
    keys: RunKeys,
    private readonly snapshot: RunSnapshot,
  ) {
    this.keyIndex.set(keys.run, 1);
    this.keyIndex.set(keys.journal, 2);
    this.journalSeq = snapshot.fields?.journalSeq ?? 0;
    this.journalHead = snapshot.fields?.journalHead ?? '';
  }

  private index(key: string): number {
    let index = this.keyIndex.get(key);
    if (index === undefined) {
      index = this.keyIndex.size + 1;
      this.keyIndex.set(key, index);
    }
    return index;
  }

  /** Sets run-hash fields. */
  run(update: RunFieldUpdate): this {
    for (const [field, value] of Object.entries(update)) {
      if (value === undefined) continue;
      this.runUpdate[field] = typeof value === 'string' ? value : JSON.stringify(value);
    }
    return this;
  }

  hset(key: string, fields: Readonly<Record<string, string>>): this {
    const flat = Object.entries(fields).flat();
    if (flat.length > 0) this.ops.push(['hset', this.index(key), ...flat]);
    return this;
  }

  set(key: string, value: string): this {
    this.ops.push(['set', this.index(key), value]);
    return this;
  }

  /** Appends a journal record chained to the previous one. */
  journal(event: JournalEvent, at: number, planDigest: string | null): this {
    const previous = this.journalSeq === 0 ? null : { seq: this.journalSeq, hash: this.journalHead };
    const { record, text } = appendRecord(previous, event, at, planDigest);
    this.journalSeq = record.seq;
    this.journalHead = record.hash;
    this.ops.push(['rpush', 2, text]);
    return this;
  }

  publish(channel: string, message: string): this {
    this.publication = [channel, message];
    return this;
  }

  /** Commits; false when the run changed since the snapshot (the caller re-reads and decides again). */
  async exec(redis: Redis): Promise<boolean> {
    const runFields = {
      ...this.runUpdate,
      journal_seq: String(this.journalSeq),
      journal_head: this.journalHead,
    };
    const ops = [['hset', 1, ...Object.entries(runFields).flat()], ...this.ops];
    const keys = [...this.keyIndex.entries()].sort((a, b) => a[1] - b[1]).map(([key]) => key);
    const flatOps = ops.flatMap(([name, keyIndex, ...args]) => [
      String(name),
      String(keyIndex),
      String(args.length),
      ...args.map(String),
    ]);
    const [committed] = await withCommit(redis).csCommit(
      keys.length,
      ...keys,
      this.snapshot.rev,
      this.publication?.[0] ?? '',
      this.publication?.[1] ?? '',
      ...flatOps,
    );
    return committed === 1;
  }
}

/**
 * Serializes an approval for the approvals hash; the field is `<stepId>|<stepDigest>|<userId>` (step
 * ids never contain `|`), so one person's approvals of two identical steps are two entries.
 */
export function approvalEntry(approval: ApprovalRecord): Record<string, string> {
  return {
    [`${approval.stepId}|${approval.stepDigest}|${approval.userId}`]: JSON.stringify(approval),
  };
}

/** What one attempt at a transition decided: the writes (if any) and the answer. */
export interface Attempt<R> {
  readonly commit?: RunCommit;
  readonly result: R;
}

const MAX_ATTEMPTS = 25;
const ABSENT: RunSnapshot = { rev: '0', approvals: [] };

/**
 * Read → decide → compare-and-set, retried on a lost race: the one loop every transition runs in.
 * `beforeCommit` runs before each commit attempt (the service puts decisions in its outbox there);
 * the returned snapshot is the one the winning attempt was decided on. With `expectAbsent` (a use case
 * that creates the run), the first attempt decides on "no such run" without reading: the commit's
 * compare-and-set on rev "0" refuses it if the run exists after all, and the next attempt reads.
 */
export async function commitLoop<R, A extends Attempt<R>>(
  redis: Redis,
  keys: RunKeys,
  clock: () => number,
  decide: (snapshot: RunSnapshot, now: number) => A | Promise<A>,
  beforeCommit?: (attempt: A, now: number) => Promise<void>,
  options: { readonly expectAbsent?: boolean } = {},
): Promise<{ attempt: A; snapshot: RunSnapshot; now: number; committed: boolean }> {
  for (let round = 0; round < MAX_ATTEMPTS; round++) {
    const snapshot = round === 0 && options.expectAbsent === true ? ABSENT : await loadRun(redis, keys);
    const now = clock();
    const attempt = await decide(snapshot, now);
    if (attempt.commit === undefined) return { attempt, snapshot, now, committed: false };
    await beforeCommit?.(attempt, now);
    if (await attempt.commit.exec(redis)) return { attempt, snapshot, now, committed: true };
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 5 * (round + 1)));
  }
  throw new Error(`${keys.run}: gave up after ${MAX_ATTEMPTS} conflicting attempts`);
}
