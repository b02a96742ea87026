/**
 * Preconditions at apply (issue 19), through the agent client against a real Countersign: a plan
 * submitted over HTTP and approved in the Slack stand-in, then checked against the example dataset
 * right before each effect. A change to the delivery between approval and apply is refused with
 * `world_changed`; an unchanged world passes.
 * The preconditions are the ones the pipeline bound from the reschedule's preview at submission:
 * the decision is used exactly as the gateway signed it.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { changeDelivery, resetFreightData, versionOf } from '../../examples/freight/data.ts';
import { freightContext, freightSteps, freightSummary } from '../../examples/freight/plans.ts';
import { checkWorld, type Decision, type StepToRun } from '../../src/client/index.ts';
import type { JsonObject } from '../../src/pipeline/index.ts';
import { type BotStack, botStack } from '../support/bot-stack.ts';

let stack: BotStack;
/** The freight plan as Countersign approved and signed it. */
let decision: Decision;

const step = (id: string): StepToRun => {
  const found = freightSteps.find((candidate) => candidate.id === id);
  if (found === undefined) throw new Error(`no step ${id}`);
  return { id: found.id, tool: found.tool, args: { ...found.args } as JsonObject };
};

beforeAll(async () => {
  stack = await botStack('world-check');
  const { runId } = await stack.client.submit({
    summary: freightSummary,
    context: freightContext,
    steps: freightSteps.map((s) => ({ id: s.id, tool: s.tool, args: { ...s.args } })),
    expiresIn: '2h',
  });
  expect((await stack.click('U0OP1', await stack.card(runId), 'approve')).status).toBe(200);
  const approved = await stack.client.waitForDecision(runId, { timeoutMs: 10_000 });
  expect(approved.status).toBe('approved');
  decision = approved;
});
afterAll(() => stack.stop());
afterEach(() => resetFreightData());

describe('verifyStep with readVersion: the world right before the effect', () => {
  it('runs the reschedule when the delivery is still at the version the approvers saw', async () => {
    expect(await stack.client.verifyStep(decision, step('s2'), { readVersion: versionOf })).toMatchObject({
      ok: true,
      preconditions: [{ type: 'delivery', id: 'dl_55120', version: '7' }],
    });
  });

  it('refuses the reschedule with world_changed when a dispatcher moved the delivery after approval', async () => {
    changeDelivery('dl_55120', { date: '2026-04-07' });
    expect(await stack.client.verifyStep(decision, step('s2'), { readVersion: versionOf })).toEqual({
      ok: false,
      reason: 'world_changed',
      entity: { type: 'delivery', id: 'dl_55120' },
      approvedVersion: '7',
      currentVersion: '8',
      message:
        'delivery dl_55120 changed since it was approved (version 7 → 8): preview again and ask for approval again; do not apply',
    });
  });

  it('fails closed, saying why, when the version cannot be read', async () => {
    const unreadable = await stack.client.verifyStep(decision, step('s2'), {
      readVersion: async () => {
        throw new Error('the freight API answered 503');
      },
    });
    expect(unreadable).toMatchObject({ ok: false, reason: 'world_changed', currentVersion: null });
    expect(unreadable.ok ? '' : unreadable.message).toBe(
      'the current version of delivery dl_55120 could not be read (the freight API answered 503), so nobody can say it is still as approved (version 7): do not apply; try again, or preview again and ask for approval again',
    );
    const gone = await stack.client.verifyStep(decision, step('s2'), { readVersion: () => undefined });
    expect(gone).toMatchObject({ ok: false, reason: 'world_changed', currentVersion: null });
  });

  it('reads nothing for a step without preconditions, nor for a step the grant does not approve', async () => {
    const read: string[] = [];
    const readVersion = (entity: { type: string; id: string }) => {
      read.push(`${entity.type} ${entity.id}`);
      return versionOf(entity);
    };
    expect(await stack.client.verifyStep(decision, step('s1'), { readVersion })).toMatchObject({
      ok: true,
      preconditions: [],
    });
    const changed = { ...step('s2'), args: { delivery_id: 'dl_55120', window: '2026-04-09' } };
    expect(await stack.client.verifyStep(decision, changed, { readVersion })).toMatchObject({
      ok: false,
      reason: 'digest_mismatch',
    });
    expect(read).toEqual([]);
  });

  it('without readVersion, passes with the preconditions, and checkWorld refuses the moved delivery', async () => {
    const check = await stack.client.verifyStep(decision, step('s2'));
    if (!check.ok) throw new Error(check.message);
    expect(await checkWorld(check, versionOf)).toEqual({ ok: true });
    changeDelivery('dl_55120');
    expect(await checkWorld(check.preconditions, versionOf)).toMatchObject({
      ok: false,
      reason: 'world_changed',
      currentVersion: '8',
    });
  });
});
