/**
 * Reading runs, apart from the transitions that change them (as BullMQ keeps `QueueGetters` apart
 * from `Queue`): the run as people see it, its stored versions, its decision, outcomes, and the
 * index of pending runs.
 */
import type { Redis } from 'ioredis';
import type { CountersignConfig } from '../config/config-types.ts';
import type { Decision, ValidatedStep } from '../pipeline/index.ts';
import { stateOf } from './guard.ts';
import { type Inbox, type InboxEntry, inboxEntry, inboxPlace, mayViewRun, sortInbox } from './inbox.ts';
import { createKeys, type Keys } from './keys.ts';
import { readOutcomes } from './outcomes.ts';
import { type TimeSource, timeOf } from './redis-time.ts';
import { projectRun } from './run-view.ts';
import { loadRun, loadVersion } from './store.ts';
import type { RunView, StepOutcome, StoredVersion, UseCaseResult } from './types.ts';

export interface QueryOptions {
  /** A shared ioredis connection (only non-blocking commands are used). */
  readonly redis: Redis;
  readonly config: CountersignConfig;
  /** Key prefix (default `cs`). */
  readonly prefix?: string;
  /**
   * Milliseconds since the epoch, for tests that move time themselves. Without it every transition
   * decides at Redis's `TIME`, read with the run: one clock for all replicas (docs/architecture.md §15).
   */
  readonly clock?: () => number;
}

/** How much of the run indexes an inbox reads. */
export interface InboxOptions {
  /** Entries per list (default 20). */
  readonly limit?: number;
  /** Pending runs read, soonest expiry first (default 500). */
  readonly pending?: number;
  /** Newest runs read for "recently decided" (default 200). */
  readonly recent?: number;
}

/** One step of a stored version, for the `show_args` button, or the answer to give instead. */
export type StepArgumentsAnswer =
  | {
      readonly ok: true;
      /** The version the button named (the current one, or an older one it was drawn for). */
      readonly version: StoredVersion;
      readonly currentVersion: number;
      readonly step: ValidatedStep;
    }
  | { readonly ok: false; readonly refusal: UseCaseResult };

export class ApprovalQueries {
  readonly keys: Keys;
  protected readonly redis: Redis;
  protected readonly config: CountersignConfig;
  /** Where transitions read `now`: Redis's `TIME`, or the clock tests inject. */
  protected readonly time: TimeSource;

  constructor(options: QueryOptions) {
    this.redis = options.redis;
    this.config = options.config;
    this.keys = createKeys(options.prefix);
    this.time = options.clock ?? 'redis';
  }

  /** The time transitions decide at, now (ms): Redis's `TIME`, or the injected clock. */
  now(): Promise<number> {
    return timeOf(this.time, this.redis);
  }

  /** The run as people see it now, or undefined for an unknown run id. */
  async getRun(runId: string): Promise<RunView | undefined> {
    const state = stateOf(await loadRun(this.redis, this.keys.forRun(runId)));
    return state === undefined ? undefined : projectRun(this.config, runId, state);
  }

  /** The run as people see it now and the revision it was read at (what a rendering of it shows). */
  async getRunRevision(runId: string): Promise<{ run: RunView; revision: number } | undefined> {
    const snapshot = await loadRun(this.redis, this.keys.forRun(runId));
    const state = stateOf(snapshot);
    return state === undefined
      ? undefined
      : { run: projectRun(this.config, runId, state), revision: Number(snapshot.rev) };
  }

  /** The run's revision alone (one field read), or undefined for an unknown run. */
  async revisionOf(runId: string): Promise<number | undefined> {
    const rev = await this.redis.hget(this.keys.forRun(runId).run, 'rev');
    return rev === null ? undefined : Number(rev);
  }

  /** When the run was last marked changed (ms), or undefined when Slack shows its state. */
  async changedMark(runId: string): Promise<number | undefined> {
    const score = await this.redis.zscore(this.keys.changed, runId);
    return score === null ? undefined : Number(score);
  }

  /** Runs whose committed state the edges may not show yet, marked before `olderThan` (ms), oldest first. */
  async changedRuns(olderThan: number, limit = 500): Promise<string[]> {
    return this.redis.zrangebyscore(this.keys.changed, '-inf', olderThan, 'LIMIT', 0, limit);
  }

  /** The agent a run belongs to, or undefined for an unknown run id (one field read). */
  async agentOf(runId: string): Promise<string | undefined> {
    return (await this.redis.hget(this.keys.forRun(runId).run, 'agent')) ?? undefined;
  }

  /** A stored version of a run (for rendering superseded cards and diffs). */
  getVersion(runId: string, version: number): Promise<StoredVersion | undefined> {
    return loadVersion(this.redis, this.keys.forRun(runId), version);
  }

  /** The signed decision, once there is one. */
  async getDecision(runId: string): Promise<Decision | undefined> {
    const text = await this.redis.get(this.keys.forRun(runId).decision);
    return text === null ? undefined : (JSON.parse(text) as Decision);
  }

  /** Outcomes reported per step; `applying` older than `defaults.uncertainAfter` reads as `uncertain`. */
  getOutcomes(runId: string): Promise<StepOutcome[]> {
    return readOutcomes(this.redis, this.keys, runId, this.outcomeOptions());
  }

  /** Pending runs with their expiry (ms), oldest expiry first: what boot-time reconciliation walks. */
  async pendingRuns(): Promise<{ runId: string; expiresAt: number }[]> {
    const entries = await this.redis.zrange(this.keys.pending, '0', '-1', 'WITHSCORES');
    const runs: { runId: string; expiresAt: number }[] = [];
    for (let i = 0; i + 1 < entries.length; i += 2)
      runs.push({ runId: entries[i] ?? '', expiresAt: Number(entries[i + 1]) });
    return runs;
  }

  /** Pending runs whose expiry (ms) is before `before`, oldest expiry first. */
  async overdueRuns(before: number, limit = 500): Promise<string[]> {
    return this.redis.zrangebyscore(this.keys.pending, '-inf', `(${before}`, 'LIMIT', 0, limit);
  }

  /**
   * `userId`'s inbox now: pending runs waiting for them or escalated to them, and the latest decided
   * runs they were part of (among the `recent` newest runs). At most `limit` per list.
   */
  async inboxFor(userId: string, options: InboxOptions = {}): Promise<Inbox> {
    return (await this.inboxesFor([userId], options)).get(userId) ?? sortInbox([], 0);
  }

  /** The inboxes of several people, reading each run once (see `inboxFor`). */
  async inboxesFor(userIds: readonly string[], options: InboxOptions = {}): Promise<Map<string, Inbox>> {
    const limit = options.limit ?? 20;
    const [now, pending, recent] = await Promise.all([
      this.now(),
      this.redis.zrange(this.keys.pending, '0', String((options.pending ?? 500) - 1)),
      this.redis.zrevrange(this.keys.runs, 0, (options.recent ?? 200) - 1),
    ]);
    const runIds = [...new Set([...pending, ...recent])];
    const states = (
      await Promise.all(
        runIds.map(async (runId) => stateOf(await loadRun(this.redis, this.keys.forRun(runId)))),
      )
    ).filter((state) => state !== undefined);
    const inboxes = new Map<string, Inbox>();
    for (const userId of new Set(userIds)) {
      const placed = states.flatMap((state) => {
        const found = inboxPlace(this.config, state, userId, now);
        return found === undefined ? [] : [found];
      });
      inboxes.set(userId, sortInbox(placed, limit));
    }
    return inboxes;
  }

  /**
   * One run as `userId`'s inbox shows it (for `/countersign show`); undefined for an unknown run and
   * for one they may not look up (`mayViewRun`).
   */
  async inboxEntryFor(runId: string, userId: string): Promise<InboxEntry | undefined> {
    const [now, snapshot] = await Promise.all([this.now(), loadRun(this.redis, this.keys.forRun(runId))]);
    const state = stateOf(snapshot);
    return state === undefined || !mayViewRun(this.config, state, userId)
      ? undefined
      : inboxEntry(this.config, state, userId, now);
  }

  /**
   * A step's arguments as the version a button was drawn for holds them, for someone who may look the
   * run up (`mayViewRun`); reading changes nothing, so a decided run or an older version still answers.
   * An unknown run, version or step is `not_found`.
   */
  async stepArgumentsFor(input: {
    readonly runId: string;
    readonly version: number;
    readonly stepId: string | undefined;
    readonly userId: string;
  }): Promise<StepArgumentsAnswer> {
    const notFound = { ok: false, refusal: { kind: 'not_found', runId: input.runId } } as const;
    const state = stateOf(await loadRun(this.redis, this.keys.forRun(input.runId)));
    if (state === undefined) return notFound;
    if (!mayViewRun(this.config, state, input.userId)) {
      return {
        ok: false,
        refusal: {
          kind: 'unauthorized',
          reason: 'you are in none of the groups that approve plans, and this plan was not sent to you',
        },
      };
    }
    const version =
      input.version === state.current.version
        ? state.current
        : await this.getVersion(input.runId, input.version);
    const step = version?.plan.steps.find((candidate) => candidate.id === input.stepId);
    if (version === undefined || step === undefined) return notFound;
    return { ok: true, version, currentVersion: state.current.version, step };
  }

  protected outcomeOptions() {
    return { time: this.time, uncertainAfterMs: this.config.defaults.uncertainAfterMs };
  }
}
