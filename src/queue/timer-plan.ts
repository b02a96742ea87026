/**
 * The timers of one plan version (docs/architecture.md §8), as pure data: its expiry, and its escalation chain —
 * the optional reminder, each configured level, and the re-notifications of the last level — with
 * the instant each is due and the deterministic BullMQ job id. How far a version's chain has got is
 * recorded by the approvals service in the commit of the step that fired (`RunView.chainStep`), so
 * scheduling the next step is idempotent without inferring anything from Slack.
 */
import { type ChainStep, chainStepKey } from '../approvals/escalation.ts';
import type { RunView } from '../approvals/types.ts';
import type { EscalationPolicy } from '../config/define-config.ts';
import { escalateJobId, expireJobId, remindJobId } from './names.ts';

/**
 * What a timer job carries. Every timer names the version it was scheduled for; a chain step also
 * when it is due (ms, Redis's time), so one that a process with a fast clock runs early changes nothing
 * and is put back (an expiry is due at the plan's `expiresAt`). Jobs added before `dueAt` was kept
 * have none and act when they run.
 */
export type TimerJobData =
  | { readonly kind: 'expire'; readonly runId: string; readonly version: number }
  | {
      readonly kind: 'remind';
      readonly runId: string;
      readonly agent: string;
      readonly version: number;
      readonly dueAt?: number;
    }
  | {
      readonly kind: 'escalate';
      readonly runId: string;
      readonly agent: string;
      readonly version: number;
      /** 1-based index into the agent's levels. */
      readonly level: number;
      /** 0 for the level itself, 1… for re-notifications of the last level. */
      readonly repeat: number;
      readonly dueAt?: number;
    };

/** The job of one step of a version's escalation chain. */
export type ChainJob = Extract<TimerJobData, { kind: 'remind' | 'escalate' }>;

/** The chain step a job is for. */
export function chainStepOf(job: ChainJob): ChainStep {
  return job.kind === 'remind'
    ? { kind: 'remind' }
    : { kind: 'escalate', level: job.level, repeat: job.repeat };
}

/** A job to add: its id, when it is due (ms since epoch) and its data. */
export interface TimerJobSpec<D extends TimerJobData = TimerJobData> {
  readonly id: string;
  readonly dueAt: number;
  readonly data: D;
}

/** What the timers of a version are computed from. */
export type TimerSubject = Pick<RunView, 'runId' | 'agent' | 'version' | 'current'> &
  Partial<Pick<RunView, 'chainStep' | 'escalationLevel' | 'escalatedAt'>>;

/** The expiry timer of the run's current version; `expiresAt` is the same for every version. */
export function expiryJob(run: TimerSubject): TimerJobSpec<Extract<TimerJobData, { kind: 'expire' }>> {
  return {
    id: expireJobId(run.runId, run.version),
    dueAt: Date.parse(run.current.plan.expiresAt),
    data: { kind: 'expire', runId: run.runId, version: run.version },
  };
}

/**
 * The escalation chain of the run's current version, in firing order. Its clock starts when the
 * version became current (v1's creation, else the edit), so an edit restarts it; steps due at or after
 * the expiry are left out (expiry comes first and ends the run).
 */
export function escalationChain(
  policy: EscalationPolicy | undefined,
  run: TimerSubject,
): TimerJobSpec<ChainJob>[] {
  if (policy === undefined) return [];
  const start = run.current.createdAt;
  const expiresAt = Date.parse(run.current.plan.expiresAt);
  const base = { runId: run.runId, agent: run.agent, version: run.version };
  const jobs: TimerJobSpec<ChainJob>[] = [];
  if (policy.reminderAfterMs !== undefined) {
    const dueAt = start + policy.reminderAfterMs;
    jobs.push({ id: remindJobId(run.runId, run.version), dueAt, data: { kind: 'remind', ...base, dueAt } });
  }
  policy.levels.forEach((level, index) => {
    const dueAt = start + level.afterMs;
    jobs.push({
      id: escalateJobId(run.runId, run.version, index + 1),
      dueAt,
      data: { kind: 'escalate', ...base, level: index + 1, repeat: 0, dueAt },
    });
  });
  const last = policy.levels.at(-1);
  for (let repeat = 1; last !== undefined && repeat <= (policy.repeat?.times ?? 0); repeat++) {
    const level = policy.levels.length;
    const dueAt = start + last.afterMs + repeat * (policy.repeat?.everyMs ?? 0);
    jobs.push({
      id: escalateJobId(run.runId, run.version, level, repeat),
      dueAt,
      data: { kind: 'escalate', ...base, level, repeat, dueAt },
    });
  }
  return jobs.filter((job) => job.dueAt < expiresAt).sort((a, b) => a.dueAt - b.dueAt);
}

/**
 * The step to schedule for the current version: the one after the last step that fired for it, or
 * undefined when the chain is done.
 */
export function nextChainJob(
  policy: EscalationPolicy | undefined,
  run: TimerSubject,
): TimerJobSpec<ChainJob> | undefined {
  const chain = escalationChain(policy, run);
  const fired = lastFired(run);
  const index =
    fired === undefined ? -1 : chain.findIndex((job) => chainStepKey(chainStepOf(job.data)) === fired);
  return chain[index + 1];
}

/** The chain steps that fired for the run's current version, in firing order (what Slack should show). */
export function firedChainSteps(policy: EscalationPolicy | undefined, run: TimerSubject): ChainStep[] {
  const fired = lastFired(run);
  if (fired === undefined) return [];
  const steps = escalationChain(policy, run).map((job) => chainStepOf(job.data));
  const index = steps.findIndex((step) => chainStepKey(step) === fired);
  return index < 0 ? [] : steps.slice(0, index + 1);
}

/**
 * The key of the last chain step that fired for the run's current version. Runs stored before the
 * service recorded it: the level it last escalated to, if that happened since the version began.
 */
function lastFired(run: TimerSubject): string | undefined {
  if (run.chainStep !== undefined)
    return run.chainStep.version === run.version ? run.chainStep.step : undefined;
  const level = run.escalationLevel ?? 0;
  const since = run.escalatedAt ?? 0;
  return level > 0 && since >= run.current.createdAt ? `l${level}` : undefined;
}

/** The chain step after `step` in its version's chain, or undefined after the last. */
export function chainJobAfter(
  policy: EscalationPolicy | undefined,
  run: TimerSubject,
  step: ChainStep,
): TimerJobSpec<ChainJob> | undefined {
  const chain = escalationChain(policy, run);
  const key = chainStepKey(step);
  const index = chain.findIndex((job) => chainStepKey(chainStepOf(job.data)) === key);
  return index < 0 ? undefined : chain[index + 1];
}

/**
 * Every timer job id the run may have for versions 1…`throughVersion` under `policy` — what a decision
 * or an edit removes. Ids of steps past the expiry are included: removing a job that is not there is
 * harmless.
 */
export function timerJobIds(
  runId: string,
  policy: EscalationPolicy | undefined,
  fromVersion: number,
  throughVersion: number,
): string[] {
  const ids: string[] = [];
  for (let version = fromVersion; version <= throughVersion; version++) {
    ids.push(expireJobId(runId, version));
    if (policy === undefined) continue;
    if (policy.reminderAfterMs !== undefined) ids.push(remindJobId(runId, version));
    policy.levels.forEach((_, index) => {
      ids.push(escalateJobId(runId, version, index + 1));
    });
    for (let repeat = 1; repeat <= (policy.repeat?.times ?? 0); repeat++)
      ids.push(escalateJobId(runId, version, policy.levels.length, repeat));
  }
  return ids;
}
