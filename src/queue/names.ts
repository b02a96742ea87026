import { createKeys } from '../approvals/keys.ts';
/**
 * Queue names, the BullMQ key prefix and deterministic job ids (docs/architecture.md §8). Job ids never contain
 * `:` (BullMQ refuses them) and are derived from what the job is about, so adding the same job twice
 * is a no-op while the first one is kept.
 */
import { sha256Hex } from '../pipeline/index.ts';

/** Signed plan submissions from agents. */
export const INTAKE_QUEUE = 'intake';
/** Expiry, escalation and reminder timers. */
export const TIMERS_QUEUE = 'timers';

/**
 * The queue an agent's final decisions are delivered on.
 * @example decisionsQueue('freight-ops') // 'decisions-freight-ops'
 */
export function decisionsQueue(agent: string): string {
  return `decisions-${agent}`;
}

/**
 * BullMQ's key prefix for a Countersign key prefix: `cs` → `cs:{bull}`. BullMQ keys then start with
 * our own prefix (one `SCAN cs:*` finds everything), and the `{bull}` hash tag keeps each queue's
 * keys in one Redis Cluster slot, as BullMQ's Lua scripts require.
 */
export function bullPrefix(prefix: string): string {
  return `${prefix}:{bull}`;
}

/**
 * The intake job id for a plan: the run and a digest of the plan text. Re-submitting the identical
 * text for the same run (a client retry) adds nothing while the first job is kept; other text for
 * the same run is a new job, which the approvals service answers with `run_exists`.
 * @example intakeJobId('0190a6e4-…', '{"runId":…}') // 'submit-0190a6e4-…-3f1c…'
 */
export function intakeJobId(runId: string, planText: string): string {
  return `submit-${runId}-${sha256Hex(planText).slice(0, 32)}`;
}

/** One decision per run, ever: the delivery job id. */
export function decisionJobId(runId: string): string {
  return `decision-${runId}`;
}

/** The expiry timer of one version (docs/architecture.md §8). */
export function expireJobId(runId: string, version: number): string {
  return `expire-${runId}-v${version}`;
}

/**
 * Escalation level `level` (1-based) of one version (docs/architecture.md §8); `repeat` ≥ 1 for the re-notifications
 * of the last level.
 * @example escalateJobId('0190…', 2, 2, 1) // 'escalate-0190…-v2-l2-r1'
 */
export function escalateJobId(runId: string, version: number, level: number, repeat = 0): string {
  return `escalate-${runId}-v${version}-l${level}${repeat > 0 ? `-r${repeat}` : ''}`;
}

/** The reminder to the card's channel before the first escalation of one version. */
export function remindJobId(runId: string, version: number): string {
  return `remind-${runId}-v${version}`;
}

/**
 * The pub/sub channel the approvals service publishes a run id on when it commits that run's decision.
 * A wake-up only: the decision itself is read from the run's `decision` key.
 */
export function decidedChannel(prefix: string, agent: string): string {
  return createKeys(prefix).decided(agent);
}
