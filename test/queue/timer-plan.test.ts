import { describe, expect, it } from 'vitest';
import { messageName, parseMessageName } from '../../src/approvals/index.ts';
import type { EscalationPolicy } from '../../src/config/config-types.ts';
import {
  chainJobAfter,
  chainStepOf,
  escalationChain,
  expiryJob,
  nextChainJob,
  timerJobIds,
} from '../../src/queue/index.ts';
import { freightEdit, freightV1, NOW, runView } from '../views/fixtures.ts';

const MIN = 60_000;
/** 15 min → leads, 1 h → a lead and a channel, then twice more every 30 min; a reminder at 10 min. */
const policy: EscalationPolicy = {
  levels: [
    { afterMs: 15 * MIN, notify: ['U0LEAD1'], group: 'leads' },
    { afterMs: 60 * MIN, notify: ['U0LEAD1'], channel: 'C0ESC' },
  ],
  repeat: { times: 2, everyMs: 30 * MIN },
  reminderAfterMs: 10 * MIN,
};
/** The freight run: created at NOW, expires 2 h later. */
const v1 = runView(freightV1());
const run = v1.runId;

describe('the timers of a version', () => {
  it('expires at the plan’s expiresAt, keyed by version', () => {
    expect(expiryJob(v1)).toEqual({
      id: `expire-${run}-v1`,
      dueAt: NOW + 120 * MIN,
      data: { kind: 'expire', runId: run, version: 1 },
    });
  });

  it('lists the chain in firing order from the version’s creation, leaving out steps due after expiry', () => {
    const chain = escalationChain(policy, v1);
    expect(chain.map((job) => [job.id, (job.dueAt - NOW) / MIN])).toEqual([
      [`remind-${run}-v1`, 10],
      [`escalate-${run}-v1-l1`, 15],
      [`escalate-${run}-v1-l2`, 60],
      [`escalate-${run}-v1-l2-r1`, 90],
      // l2-r2 would be due at 120 min: the expiry comes first.
    ]);
    expect(chain[3]?.data).toEqual({
      kind: 'escalate',
      runId: run,
      agent: 'freight-ops',
      version: 1,
      level: 2,
      repeat: 1,
      dueAt: NOW + 90 * MIN,
    });
    expect(chain.every((job) => !job.id.includes(':'))).toBe(true);
  });

  it('restarts the escalation clock at an edit; the expiry stays', () => {
    const { current } = freightEdit();
    const v2 = runView(current);
    expect(escalationChain(policy, v2)[0]).toMatchObject({
      id: `remind-${run}-v2`,
      dueAt: current.createdAt + 10 * MIN,
    });
    expect(expiryJob(v2)).toMatchObject({ id: `expire-${run}-v2`, dueAt: NOW + 120 * MIN });
    expect(escalationChain(undefined, v2)).toEqual([]);
  });

  it('schedules the step after the last one that fired, at this version only', () => {
    expect(nextChainJob(policy, v1)?.id).toBe(`remind-${run}-v1`);
    expect(nextChainJob(policy, { ...v1, chainStep: { version: 1, step: 'l1' } })?.id).toBe(
      `escalate-${run}-v1-l2`,
    );
    // Progress of another version says nothing about this one.
    expect(nextChainJob(policy, { ...v1, chainStep: { version: 2, step: 'l2' } })?.id).toBe(
      `remind-${run}-v1`,
    );
    expect(nextChainJob(policy, { ...v1, chainStep: { version: 1, step: 'l2r1' } })).toBeUndefined();
  });

  it('reads the progress of a run stored before it was recorded from the level it last escalated to', () => {
    const escalated = { ...v1, escalationLevel: 1, escalatedAt: NOW + 16 * MIN };
    expect(nextChainJob(policy, escalated)?.id).toBe(`escalate-${run}-v1-l2`);
    // Escalated before this version began: its chain starts over.
    expect(nextChainJob(policy, { ...escalated, escalatedAt: NOW - MIN })?.id).toBe(`remind-${run}-v1`);
  });

  it('finds the step after one that fired, and nothing after the last', () => {
    const [reminder, l1, , r1] = escalationChain(policy, v1);
    if (reminder?.data.kind !== 'remind' || l1?.data.kind !== 'escalate' || r1?.data.kind !== 'escalate')
      throw new Error('unexpected chain');
    expect(chainJobAfter(policy, v1, chainStepOf(reminder.data))?.id).toBe(`escalate-${run}-v1-l1`);
    expect(chainJobAfter(policy, v1, chainStepOf(l1.data))?.id).toBe(`escalate-${run}-v1-l2`);
    expect(chainJobAfter(policy, v1, chainStepOf(r1.data))).toBeUndefined();
  });

  it('names every job a decision or an edit removes, expiry included, for each version', () => {
    expect(timerJobIds(run, policy, 1, 2)).toEqual([
      `expire-${run}-v1`,
      `remind-${run}-v1`,
      `escalate-${run}-v1-l1`,
      `escalate-${run}-v1-l2`,
      `escalate-${run}-v1-l2-r1`,
      `escalate-${run}-v1-l2-r2`,
      `expire-${run}-v2`,
      `remind-${run}-v2`,
      `escalate-${run}-v2-l1`,
      `escalate-${run}-v2-l2`,
      `escalate-${run}-v2-l2-r1`,
      `escalate-${run}-v2-l2-r2`,
    ]);
    expect(timerJobIds(run, undefined, 3, 3)).toEqual([`expire-${run}-v3`]);
  });

  it('names recorded messages one way, and reads the names back', () => {
    const escalation = {
      kind: 'escalation',
      version: 2,
      step: { kind: 'escalate', level: 2, repeat: 1 },
      channel: 'D0ABC',
    } as const;
    expect(messageName(escalation)).toBe('escalation:v2:l2r1:D0ABC');
    expect(parseMessageName('escalation:v2:l2r1:D0ABC')).toEqual(escalation);
    expect(parseMessageName('escalation:v1:reminder:C0OPS')).toEqual({
      kind: 'escalation',
      version: 1,
      step: { kind: 'remind' },
      channel: 'C0OPS',
    });
    expect(parseMessageName('diff:v2')).toEqual({ kind: 'diff', version: 2 });
    expect(parseMessageName('card')).toEqual({ kind: 'card' });
    expect(parseMessageName('escalation:v1:l0:C0OPS')).toBeUndefined();
    expect(parseMessageName('something else')).toBeUndefined();
  });
});
