/**
 * Each agent's sliding edit window and its drift alarm (issue 20), in Redis so every replica sees the
 * same figures: the validated plans submitted in the window, those people edited, and those where more
 * than half of the steps were added, changed or removed between the agent's plan (v1) and the plan as
 * it stands — the same definition as the insights report (insights/run-history.ts). The alarm's state
 * is answered here, once: it is raised when the share reaches the agent's threshold with enough plans
 * in the window, and raised again only after it has recovered (fallen below the threshold).
 */
import type { Redis } from 'ioredis';
import { type RecurringEdit, recurringEdits } from './insights/edit-patterns.ts';
import { type HeavyRun, rankHeavy } from './insights/edit-stats.ts';
import { historyOf } from './insights/run-history.ts';
import { parseRecord } from './journal.ts';
import type { EditWindowKeys, Keys } from './keys.ts';
import type { JournalRecord } from './types.ts';

/** An agent's drift alarm, from its config (`agents.<name>.drift`). */
export interface DriftRule {
  /** Raise when this share (0–1) of the window's plans were more than half rewritten… */
  readonly above: number;
  /** …and the window holds at least this many plans. */
  readonly minPlans: number;
}

export interface EditWindowStats {
  readonly agent: string;
  readonly windowMs: number;
  /** Validated plans submitted in the window. */
  readonly plans: number;
  readonly edited: number;
  /** Plans where more than half of the steps were touched. */
  readonly heavy: number;
  /** `heavy ÷ plans` (0 when there are no plans). */
  readonly share: number;
  /** The most heavily edited runs of the window, most first. */
  readonly mostEdited: readonly HeavyRun[];
}

export type DriftAnswer =
  /** Just crossed: post the alarm (claim it first: `claimAlarmPost`). */
  | { readonly kind: 'raised'; readonly stats: EditWindowStats }
  /** Fell below the threshold: the next crossing posts again. */
  | { readonly kind: 'recovered'; readonly stats: EditWindowStats }
  | { readonly kind: 'steady'; readonly raised: boolean; readonly stats: EditWindowStats };

export { touchedSince } from './insights/run-history.ts';

/** KEYS plans, edited, heavy, touched; ARGV cutoff (ms): forgets runs submitted before it. */
const TRIM = `
local cutoff = '(' .. ARGV[1]
local old = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', cutoff, 'LIMIT', 0, 1000)
if #old > 0 then redis.call('HDEL', KEYS[4], unpack(old)) end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', cutoff)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', cutoff)
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', cutoff)
return #old`;

/** KEYS alarm; ARGV want ('raise' | 'clear'), now. 1 raised now, 2 recovered now, 0 unchanged. */
const SET_ALARM = `
local raised = redis.call('HGET', KEYS[1], 'raised') == '1'
if ARGV[1] == 'raise' and not raised then
  redis.call('HSET', KEYS[1], 'raised', '1', 'raised_at', ARGV[2], 'posted', '0')
  redis.call('HDEL', KEYS[1], 'claim')
  return 1
end
if ARGV[1] == 'clear' and raised then
  redis.call('HSET', KEYS[1], 'raised', '0', 'recovered_at', ARGV[2])
  return 2
end
return 0`;

/** KEYS alarm; ARGV now, lease ms. 1: this caller posts the raised alarm now. */
const CLAIM_POST = `
if redis.call('HGET', KEYS[1], 'raised') ~= '1' or redis.call('HGET', KEYS[1], 'posted') == '1' then return 0 end
local claim = tonumber(redis.call('HGET', KEYS[1], 'claim') or '0')
if claim > 0 and tonumber(ARGV[1]) - claim < tonumber(ARGV[2]) then return 0 end
redis.call('HSET', KEYS[1], 'claim', ARGV[1])
return 1`;

/** The edit window of an agent the config does not name (24 h, as `DEFAULT_EDIT_WINDOW` in config). */
export const DEFAULT_EDIT_WINDOW_MS = 24 * 60 * 60 * 1000;

/** How long a claimed alarm post is left to its claimer before another process may post it. */
const POST_LEASE_MS = 60_000;

export class EditWindow {
  constructor(
    private readonly redis: Redis,
    private readonly keys: Keys,
    /** The agent's window (ms): its drift window, or the default. */
    private readonly windowOf: (agent: string) => number,
  ) {}

  /** A validated plan reached people (idempotent). */
  async submitted(agent: string, runId: string, at: number): Promise<void> {
    await this.redis.zadd(this.keys.editWindow(agent).plans, at, runId);
  }

  /** A plan's current version after an edit, against the agent's v1 (idempotent; the newest wins). */
  async edited(
    agent: string,
    runId: string,
    submittedAt: number,
    steps: { readonly touched: number; readonly total: number },
  ): Promise<void> {
    const keys = this.keys.editWindow(agent);
    const heavy = steps.touched * 2 > steps.total;
    await Promise.all([
      this.redis.zadd(keys.plans, submittedAt, runId),
      this.redis.zadd(keys.edited, submittedAt, runId),
      this.redis.hset(keys.touched, runId, `${steps.touched}/${steps.total}`),
      heavy ? this.redis.zadd(keys.heavy, submittedAt, runId) : this.redis.zrem(keys.heavy, runId),
    ]);
  }

  /** The window's figures now (runs older than the window are forgotten first). */
  async stats(agent: string, now: number, top = 3): Promise<EditWindowStats> {
    const keys = this.keys.editWindow(agent);
    const windowMs = this.windowOf(agent);
    const cutoff = now - windowMs;
    await this.trim(keys, cutoff);
    const [plans, edited, heavy] = await Promise.all([
      this.redis.zcount(keys.plans, cutoff, '+inf'),
      this.redis.zrangebyscore(keys.edited, cutoff, '+inf'),
      this.redis.zcount(keys.heavy, cutoff, '+inf'),
    ]);
    const touched = edited.length === 0 ? [] : await this.redis.hmget(keys.touched, ...edited);
    const runs = edited.flatMap((runId, index) => {
      const [t, n] = (touched[index] ?? '').split('/').map(Number);
      return t === undefined || n === undefined || !(t > 0)
        ? []
        : [{ runId, touchedSteps: t, totalSteps: n }];
    });
    return {
      agent,
      windowMs,
      plans,
      edited: edited.length,
      heavy,
      share: plans === 0 ? 0 : heavy / plans,
      mostEdited: rankHeavy(runs).slice(0, top),
    };
  }

  /**
   * The drift rule applied to the window now: `raised` once when the share reaches `above` with at
   * least `minPlans` plans, `recovered` once when it falls below; otherwise `steady`. Fewer plans than
   * `minPlans` changes nothing either way (too little evidence).
   */
  async evaluate(agent: string, rule: DriftRule, now: number): Promise<DriftAnswer> {
    const stats = await this.stats(agent, now);
    const keys = this.keys.editWindow(agent);
    const enough = stats.plans >= rule.minPlans;
    const want = !enough ? undefined : stats.share >= rule.above ? 'raise' : 'clear';
    const changed =
      want === undefined ? 0 : Number(await this.redis.eval(SET_ALARM, 1, keys.alarm, want, String(now)));
    if (changed === 1) return { kind: 'raised', stats };
    if (changed === 2) return { kind: 'recovered', stats };
    return { kind: 'steady', raised: (await this.redis.hget(keys.alarm, 'raised')) === '1', stats };
  }

  /**
   * Whether this process should post the agent's raised alarm now: it is raised, not posted yet, and
   * nobody claimed it in the last minute (a process that died mid-post leaves it to the next sweep).
   */
  async claimAlarmPost(agent: string, now: number): Promise<boolean> {
    const claimed = await this.redis.eval(
      CLAIM_POST,
      1,
      this.keys.editWindow(agent).alarm,
      String(now),
      String(POST_LEASE_MS),
    );
    return Number(claimed) === 1;
  }

  /** Whether the agent's drift alarm is raised now. */
  async alarmRaised(agent: string): Promise<boolean> {
    return (await this.redis.hget(this.keys.editWindow(agent).alarm, 'raised')) === '1';
  }

  /**
   * The edits that recur among the window's edited runs (the newest `limit`), read from their
   * journals: what the App Home shows leads (the full report is `npm run insights`).
   */
  async recurring(agent: string, now: number, limit = 200): Promise<RecurringEdit[]> {
    const keys = this.keys.editWindow(agent);
    const runIds = await this.redis.zrevrangebyscore(
      keys.edited,
      '+inf',
      now - this.windowOf(agent),
      'LIMIT',
      0,
      limit,
    );
    const journals = await Promise.all(
      runIds.map((runId) => this.redis.lrange(this.keys.forRun(runId).journal, 0, -1)),
    );
    const histories = runIds.flatMap((runId, index) => {
      const records = (journals[index] ?? []).flatMap((text): JournalRecord[] => {
        const parsed = parseRecord(text);
        return parsed.ok ? [parsed.record] : [];
      });
      return historyOf(runId, records) ?? [];
    });
    return recurringEdits(histories);
  }

  /** The raised alarm reached Slack. */
  async alarmPosted(agent: string): Promise<void> {
    await this.redis.hset(this.keys.editWindow(agent).alarm, 'posted', '1');
  }

  private async trim(keys: EditWindowKeys, cutoff: number): Promise<void> {
    await this.redis.eval(TRIM, 4, keys.plans, keys.edited, keys.heavy, keys.touched, String(cutoff));
  }
}
