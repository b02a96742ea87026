/**
 * The timers' transitions: a version's expiry, an escalation step, the reminder. A timer names the
 * version it was scheduled for; one aimed at a superseded or decided version changes nothing but the
 * journal (`stale_timer`). Escalation progress — the last chain step that fired — is recorded in the
 * same commit, so the scheduler never has to infer it from what reached Slack.
 */
import { type ChainStep, chainStepKey, escalationTarget } from '../escalation.ts';
import { stateOf, timerApplies } from '../guard.ts';
import { escalatedLevels } from '../run-view.ts';
import type { RunSnapshot } from '../store.ts';
import { type Attempt, commitFor, expireNow, type UseCaseContext, viewOf } from './context.ts';

export interface TimerInput {
  readonly runId: string;
  /** The version the timer was scheduled for. */
  readonly version: number;
}

/** A chain step's timer: before `dueAt` (ms, Redis's time) it answers `pending` and changes nothing. */
export interface ChainTimerInput extends TimerInput {
  readonly dueAt?: number;
}

/**
 * A version's expiry. Early (before `expiresAt` by Redis's time: a process whose clock runs fast ran
 * the job) it answers `pending` and changes nothing; the timer is put back.
 */
export function expire(ctx: UseCaseContext, snapshot: RunSnapshot, input: TimerInput): Attempt {
  const stale = staleTimer(ctx, snapshot, input, `expire-v${input.version}`);
  if (stale !== undefined) return stale;
  const state = stateOf(snapshot);
  if (state === undefined) return { result: { kind: 'not_found', runId: input.runId } };
  if (ctx.now < state.fields.expiresAt)
    return { result: { kind: 'pending', run: viewOf(ctx, input.runId, state) } };
  return expireNow(ctx, snapshot, state);
}

export interface EscalateInput extends ChainTimerInput {
  /** 1-based. */
  readonly level: number;
  /** 0 for the level itself, 1… for its re-notifications. */
  readonly repeat?: number;
}

/**
 * An escalation step fired (not before its `dueAt`, by Redis's time): the people today's config names for the level are recorded as escalated
 * to (with the level, which decides what they may do), and the step as the chain's progress. Past the
 * expiry (an overdue job after downtime) the run expires instead.
 */
export function escalate(ctx: UseCaseContext, snapshot: RunSnapshot, input: EscalateInput): Attempt {
  const step: ChainStep = { kind: 'escalate', level: input.level, repeat: input.repeat ?? 0 };
  const stale = staleTimer(ctx, snapshot, input, `escalate-v${input.version}-${chainStepKey(step)}`);
  if (stale !== undefined) return stale;
  const state = stateOf(snapshot);
  if (state === undefined) return { result: { kind: 'not_found', runId: input.runId } };
  if (ctx.now >= state.fields.expiresAt) return expireNow(ctx, snapshot, state);
  if (input.dueAt !== undefined && ctx.now < input.dueAt)
    return { result: { kind: 'pending', run: viewOf(ctx, input.runId, state) } };
  const { notified } = escalationTarget(ctx.config, state.fields.agent, step);
  const escalatedTo = [...new Set([...state.fields.escalatedTo, ...notified])];
  const levels = { ...escalatedLevels(ctx.config, state.fields) };
  for (const userId of notified) {
    levels[userId] = [...new Set([...(levels[userId] ?? []), input.level])].sort((a, b) => a - b);
  }
  const escalationLevel = Math.max(input.level, state.fields.escalationLevel);
  const chainStep = { version: input.version, step: chainStepKey(step) };
  const commit = commitFor(ctx, snapshot, input.runId)
    .run({
      escalation_level: escalationLevel,
      escalated_to: escalatedTo,
      escalated_levels: levels,
      escalated_at: ctx.now,
      chain_step: chainStep,
    })
    .journal(
      {
        type: 'escalated',
        version: input.version,
        level: input.level,
        ...(step.repeat > 0 ? { repeat: step.repeat } : {}),
        notified: [...notified],
      },
      ctx.now,
      state.current.plan.digest,
    );
  const fields = {
    ...state.fields,
    escalationLevel,
    escalatedTo,
    escalatedLevels: levels,
    escalatedAt: ctx.now,
    chainStep,
  };
  const run = viewOf(ctx, input.runId, { ...state, fields });
  return { commit, result: { kind: 'escalated', run, level: input.level, step } };
}

/**
 * The reminder in the card's channel fired (recorded as the chain's progress; not before its `dueAt`);
 * past the expiry, the run expires.
 */
export function remind(ctx: UseCaseContext, snapshot: RunSnapshot, input: ChainTimerInput): Attempt {
  const stale = staleTimer(ctx, snapshot, input, `remind-v${input.version}`);
  if (stale !== undefined) return stale;
  const state = stateOf(snapshot);
  if (state === undefined) return { result: { kind: 'not_found', runId: input.runId } };
  if (ctx.now >= state.fields.expiresAt) return expireNow(ctx, snapshot, state);
  if (input.dueAt !== undefined && ctx.now < input.dueAt)
    return { result: { kind: 'pending', run: viewOf(ctx, input.runId, state) } };
  const chainStep = { version: input.version, step: chainStepKey({ kind: 'remind' }) };
  const commit = commitFor(ctx, snapshot, input.runId)
    .run({ chain_step: chainStep })
    .journal({ type: 'reminded', version: input.version }, ctx.now, state.current.plan.digest);
  const run = viewOf(ctx, input.runId, { ...state, fields: { ...state.fields, chainStep } });
  return { commit, result: { kind: 'reminded', run } };
}

/** A timer aimed at a decided or superseded version: journal it and do nothing else. */
function staleTimer(
  ctx: UseCaseContext,
  snapshot: RunSnapshot,
  input: TimerInput,
  timer: string,
): Attempt | undefined {
  const state = stateOf(snapshot);
  if (state === undefined) return { result: { kind: 'not_found', runId: input.runId } };
  if (timerApplies(snapshot, input.version)) return undefined;
  const { fields } = state;
  const commit = commitFor(ctx, snapshot, input.runId).journal(
    { type: 'stale_timer', timer, version: input.version, currentVersion: fields.version },
    ctx.now,
    fields.planDigest,
  );
  const run = viewOf(ctx, input.runId, state);
  return {
    commit,
    result:
      fields.status === 'pending'
        ? { kind: 'stale', run, currentVersion: fields.version }
        : {
            kind: 'already_decided',
            run,
            status: fields.status,
            ...(fields.decidedBy === undefined ? {} : { by: fields.decidedBy }),
          },
  };
}
