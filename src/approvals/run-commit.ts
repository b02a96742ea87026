/**
 * Writing a run: the writes of one transition collected and committed atomically with compare-and-set
 * on the run's `rev` (lua/commit.lua), and the read → decide → commit loop every transition runs in.
 */
import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';
import { CountersignError } from '../pipeline/index.ts';
import { appendRecord } from './journal.ts';
import type { RunKeys } from './keys.ts';
import { redisNow, type TimeSource } from './redis-time.ts';
import { loadRunAt, type RunSnapshot } from './store.ts';
import type { ApprovalRecord, JournalEvent, RunStatus } from './types.ts';

const COMMIT_LUA = readFileSync(new URL('./lua/commit.lua', import.meta.url), 'utf8');

type CommitRedis = Redis & {
  csCommit(keyCount: number, ...args: string[]): Promise<[number, string]>;
};

/** Registers the commit script on a connection (idempotent). */
function withCommit(redis: Redis): CommitRedis {
  const candidate = redis as CommitRedis;
  if (typeof candidate.csCommit !== 'function') redis.defineCommand('csCommit', { lua: COMMIT_LUA });
  return candidate;
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
  chain_step?: { readonly version: number; readonly step: string };
  plan_digest?: string;
  submission_digest?: string;
  released?: Readonly<
    Record<string, { readonly at: number; readonly version: number; readonly digest: string }>
  >;
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

  /**
   * @param deadline when set, the commit applies only while Redis's `TIME` is before it (ms): a
   * transition decided on a pending run before its expiry must land before the expiry too.
   */
  constructor(
    keys: RunKeys,
    private readonly snapshot: RunSnapshot,
    private readonly deadline?: number,
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

  /**
   * Commits; the run's new revision, or undefined when the run changed since the snapshot or, with
   * `checkDeadline`, Redis's time reached the commit's deadline (the caller re-reads and decides again).
   */
  async exec(redis: Redis, options: { readonly checkDeadline?: boolean } = {}): Promise<number | undefined> {
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
    const [committed, revision] = await withCommit(redis).csCommit(
      keys.length,
      ...keys,
      this.snapshot.rev,
      this.publication?.[0] ?? '',
      this.publication?.[1] ?? '',
      options.checkDeadline === true && this.deadline !== undefined ? String(this.deadline) : '',
      ...flatOps,
    );
    return committed === 1 ? Number(revision) : undefined;
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
const ABSENT: RunSnapshot = { rev: '0', approvals: [], outcomes: {} };

/**
 * Read → decide → compare-and-set, retried on a lost race: the one loop every transition runs in.
 * `now` is Redis's `TIME` read with the snapshot (one MULTI), so every replica decides at the same
 * time whatever its own clock says; a commit with a deadline is refused once Redis's time reaches it,
 * and the next attempt decides again past it. An injected `time` function (tests) replaces both.
 * `beforeCommit` runs before each commit attempt (the service puts decisions in its outbox there);
 * the returned snapshot is the one the winning attempt was decided on. With `expectAbsent` (a use case
 * that creates the run), the first attempt decides on "no such run" without reading it (only `TIME`):
 * the commit's compare-and-set on rev "0" refuses it if the run exists after all, and the next
 * attempt reads.
 */
export async function commitLoop<R, A extends Attempt<R>>(
  redis: Redis,
  keys: RunKeys,
  time: TimeSource,
  decide: (snapshot: RunSnapshot, now: number) => A | Promise<A>,
  beforeCommit?: (attempt: A, now: number) => Promise<void>,
  options: { readonly expectAbsent?: boolean } = {},
): Promise<{ attempt: A; snapshot: RunSnapshot; now: number; committed: boolean; revision?: number }> {
  for (let round = 0; round < MAX_ATTEMPTS; round++) {
    const read =
      round === 0 && options.expectAbsent === true
        ? { snapshot: ABSENT, redisNow: time === 'redis' ? await redisNow(redis) : 0 }
        : await loadRunAt(redis, keys);
    const { snapshot } = read;
    const now = time === 'redis' ? read.redisNow : time();
    const attempt = await decide(snapshot, now);
    if (attempt.commit === undefined) return { attempt, snapshot, now, committed: false };
    await beforeCommit?.(attempt, now);
    const revision = await attempt.commit.exec(redis, { checkDeadline: time === 'redis' });
    if (revision !== undefined) return { attempt, snapshot, now, committed: true, revision };
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 5 * (round + 1)));
  }
  throw new CountersignError(
    'write_conflict',
    `${keys.run}: gave up after ${MAX_ATTEMPTS} conflicting attempts`,
  );
}
