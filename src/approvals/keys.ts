import { CountersignError } from '../pipeline/errors.ts';
import { type ChainStep, chainStepKey, parseChainStepKey } from './escalation.ts';
/**
 * Redis key layout. Everything about one run shares the hash tag `{<runId>}` so it lives in one Redis
 * Cluster slot and one Lua script may touch all of it. Run ids never contain `{`, `}` or `:` (parse
 * enforces RUN_ID_PATTERN). Cross-run indexes are separate keys, written outside run scripts.
 */
export interface RunKeys {
  /** Hash: status, current version, rev (CAS counter), journal head, decision fields. */
  readonly run: string;
  /** String per version: the stored version document (JSON). Use `version(n)`. */
  version(n: number): string;
  /**
   * Hash: `<stepId>|<stepDigest>|<userId>` → approval JSON. Approvals are bound to a step's id and
   * digest (fields written before that are `<stepDigest>|<userId>`; store.ts reads both).
   */
  readonly approvals: string;
  /** List: the hash-chained journal records (JSON). */
  readonly journal: string;
  /** String: the signed decision (JSON), once decided. */
  readonly decision: string;
  /** String `1` once the decision was handed to delivery (the outbox reads it). */
  readonly delivered: string;
  /** Hash: Slack message references (card per version, escalation messages). */
  readonly messages: string;
  /** Hash: stepId → outcome JSON reported by the agent. */
  readonly outcomes: string;
  /**
   * Hash: stepId → the signed release (JSON `Release`, pipeline/decision.ts) of a step released before
   * the plan was decided. Written in the commit that releases the step; never removed or changed.
   */
  readonly releases: string;
}

export interface Keys {
  readonly prefix: string;
  forRun(runId: string): RunKeys;
  /** Sorted set of pending run ids scored by expiresAt (ms): boot-time reconciliation walks it. */
  readonly pending: string;
  /** Sorted set of all run ids scored by creation time: audit export walks it. */
  readonly runs: string;
  /** Sorted set of decided run ids whose decision is not yet confirmed enqueued (the outbox). */
  readonly undelivered: string;
  /**
   * Sorted set of run ids whose committed state Slack may not show yet (scored by the commit's time):
   * marked before each commit, cleared once the run is rendered at its revision. The edges' outbox.
   */
  readonly changed: string;
  /** Pub/sub channel announcing each decided run id of an agent, from the commit that decides it. */
  decided(agent: string): string;
  /** Stream: an agent's decisions in the order they were delivered (the decision feed). */
  feed(agent: string): string;
  /** Pub/sub channel announcing that an agent's feed has a new entry. */
  feedChannel(agent: string): string;
  /** Pub/sub channel announcing, with the run id as the message, that one of an agent's runs released a step. */
  releasedChannel(agent: string): string;
  /** Submission nonces, for replay refusal: `nonce(agent, nonce)`. */
  nonce(agent: string, nonce: string): string;
  /** An agent's sliding edit window and drift alarm (edit-window.ts), sharing one hash tag. */
  editWindow(agent: string): EditWindowKeys;
}

export interface EditWindowKeys {
  /** Sorted set: run ids of validated plans, scored by submission time (ms). */
  readonly plans: string;
  /** Sorted set: the edited ones among them, scored by submission time. */
  readonly edited: string;
  /** Sorted set: those where more than half of the steps were touched, scored by submission time. */
  readonly heavy: string;
  /** Hash: run id → `touched/total` steps (v1 → current), for the most edited runs. */
  readonly touched: string;
  /** Hash: the drift alarm's state (`raised` 0/1, `raised_at`, `posted` 0/1, `claim`). */
  readonly alarm: string;
}

/** Key names under `prefix` (default `cs`). */
export function createKeys(prefix = 'cs'): Keys {
  if (!/^[A-Za-z0-9_:-]{1,64}$/.test(prefix))
    throw new CountersignError('invalid_argument', `invalid key prefix ${JSON.stringify(prefix)}`);
  return {
    prefix,
    forRun(runId) {
      const base = `${prefix}:{${runId}}`;
      return {
        run: `${base}:run`,
        version: (n) => `${base}:v:${n}`,
        approvals: `${base}:approvals`,
        journal: `${base}:journal`,
        decision: `${base}:decision`,
        delivered: `${base}:delivered`,
        messages: `${base}:messages`,
        outcomes: `${base}:outcomes`,
        releases: `${base}:releases`,
      };
    },
    pending: `${prefix}:index:pending`,
    runs: `${prefix}:index:runs`,
    undelivered: `${prefix}:index:undelivered`,
    changed: `${prefix}:index:changed`,
    decided: (agent) => `${prefix}:decided:${agent}`,
    feed: (agent) => `${prefix}:feed:${agent}`,
    feedChannel: (agent) => `${prefix}:feed-updated:${agent}`,
    releasedChannel: (agent) => `${prefix}:released:${agent}`,
    nonce: (agent, nonce) => `${prefix}:nonce:${agent}:${nonce}`,
    editWindow(agent) {
      const base = `${prefix}:{edits:${agent}}`;
      return {
        plans: `${base}:plans`,
        edited: `${base}:edited`,
        heavy: `${base}:heavy`,
        touched: `${base}:touched`,
        alarm: `${base}:alarm`,
      };
    },
  };
}

/**
 * A Slack message that shows a run, as named in the run's `messages` hash: the card, the diff message
 * of an edit, or what one escalation step posted to one channel. This module owns the scheme.
 */
export type MessageName =
  | { readonly kind: 'card' }
  | { readonly kind: 'diff'; readonly version: number }
  | {
      readonly kind: 'escalation';
      readonly version: number;
      readonly step: ChainStep;
      readonly channel: string;
    };

/**
 * The field a message is recorded under.
 * @example messageName({ kind: 'escalation', version: 2, step: { kind: 'escalate', level: 1, repeat: 0 }, channel: 'D0ABC' }) // 'escalation:v2:l1:D0ABC'
 */
export function messageName(name: MessageName): string {
  switch (name.kind) {
    case 'card':
      return 'card';
    case 'diff':
      return `diff:v${name.version}`;
    case 'escalation':
      return `escalation:v${name.version}:${chainStepKey(name.step)}:${name.channel}`;
  }
}

/** Reads a recorded message's field back; undefined for anything else. */
export function parseMessageName(text: string): MessageName | undefined {
  if (text === 'card') return { kind: 'card' };
  const diff = /^diff:v(\d+)$/.exec(text);
  if (diff !== null) return { kind: 'diff', version: Number(diff[1]) };
  const escalation = /^escalation:v(\d+):([a-z0-9]+):(.+)$/.exec(text);
  const step = escalation === null ? undefined : parseChainStepKey(escalation[2] ?? '');
  if (escalation === null || step === undefined) return undefined;
  return { kind: 'escalation', version: Number(escalation[1]), step, channel: escalation[3] ?? '' };
}
