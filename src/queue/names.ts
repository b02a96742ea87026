/**
 * Queue names, the BullMQ key prefix and deterministic job ids (docs/architecture.md §8). Job ids never contain
 * `:` (BullMQ refuses them) and are derived from what the job is about, so adding the same job twice
 * is a no-op while the first one is kept.
 */

/** Expiry, escalation and reminder timers. */
export const TIMERS_QUEUE = 'timers';
/** Decision webhooks. */
export const WEBHOOKS_QUEUE = 'webhooks';
/** Slack renderings: one job per run revision, run one at a time per run. */
export const RENDER_QUEUE = 'render';

/** Every queue Countersign runs (for tools that list or clear them). */
export const QUEUES = [TIMERS_QUEUE, WEBHOOKS_QUEUE, RENDER_QUEUE] as const;

/** The rendering of a run at a revision: a second commit of the same revision adds nothing. */
export function renderJobId(runId: string, revision: number): string {
  return `render-${runId}-r${revision}`;
}

/** A rendering of a run due at `at` (ms since the epoch): one per run and instant. */
export function renderAtJobId(runId: string, at: number): string {
  return `render-${runId}-at${at}`;
}

/** The repair loop's rendering of a run: at most one waiting per run, however often the loop finds it. */
export function repairJobId(runId: string): string {
  return `render-${runId}-repair`;
}

/** One webhook delivery per decision: its job id, which is also the delivery id the receiver sees. */
export function webhookJobId(runId: string): string {
  return `webhook-${runId}`;
}

/**
 * BullMQ's key prefix for a Countersign key prefix: `cs` → `cs:{bull}`. BullMQ keys then start with
 * our own prefix (one `SCAN cs:*` finds everything), and the `{bull}` hash tag keeps each queue's
 * keys in one Redis Cluster slot, as BullMQ's Lua scripts require.
 */
export function bullPrefix(prefix: string): string {
  return `${prefix}:{bull}`;
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
