/**
 * Plans with dependencies end to end, with nothing seeded: the agent client submits over HTTP, the
 * approvals service releases a `continue` note in the submission's own commit, the agent waits for the
 * signed release and runs it; an operator approves the rest in the Slack stand-in; the step that
 * depends on the rebooking is refused at the gate until the rebooking is reported applied.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freightContext, freightSteps, freightSummary } from '../../examples/freight/plans.ts';
import { type Decision, isRelease, type PlanStepInput } from '../../src/client/index.ts';
import type { JsonObject } from '../../src/pipeline/index.ts';
import { type BotStack, botStack } from '../support/bot-stack.ts';
import { earlyNotesConfig } from '../support/early-notes-config.ts';

let stack: BotStack;
beforeAll(async () => {
  // Notes are internal and may run before the plan is decided.
  stack = await botStack('releases-e2e', { config: earlyNotesConfig() });
});
afterAll(() => stack.stop());

describe('an agent running a plan with dependencies through Countersign', () => {
  it('runs the released note at once, and the reply only after the approved rebooking is applied', async () => {
    // s1 add_note (auto, continue), s2 reschedule_delivery (review), s3 send_reply ← s1, s2.
    const steps: PlanStepInput[] = freightSteps.map((step) => ({
      ...step,
      args: { ...step.args },
      ...(step.id === 's3' ? { dependsOn: ['s2', 's1'] } : {}),
    }));
    const { runId } = await stack.client.submit({
      summary: freightSummary,
      context: freightContext,
      steps,
      expiresIn: '2h',
    });
    const byId = (id: string) => {
      const step = steps.find((candidate) => candidate.id === id);
      if (step?.id === undefined) throw new Error(`no ${id}`);
      return { id: step.id, tool: step.tool, args: step.args as JsonObject };
    };

    // The note is released by the submission itself; nothing else is.
    const release = await stack.client.waitForRelease(runId, 's1', { timeoutMs: 10_000 });
    if (!isRelease(release)) throw new Error('expected the release of s1, got a decision');
    expect(await stack.client.verifyStep(release, byId('s1'))).toMatchObject({ ok: true });
    expect(await stack.client.verifyStep(release, byId('s2'))).toMatchObject({
      ok: false,
      reason: 'not_released',
    });
    expect((await stack.client.getReleases(runId)).releases.map((entry) => entry.stepId)).toEqual(['s1']);
    expect((await stack.client.reportOutcome(runId, 's1', { status: 'applying' })).ok).toBe(true);
    expect((await stack.client.reportOutcome(runId, 's1', { status: 'applied' })).ok).toBe(true);
    // An unreleased step of a pending run cannot even be claimed.
    expect((await stack.client.reportOutcome(runId, 's2', { status: 'applying' })).ok).toBe(false);

    const card = await stack.card(runId);
    expect((await stack.click('U0OP1', card, 'approve')).status).toBe(200);
    const decision = (await stack.client.waitForDecision(runId, { timeoutMs: 10_000 })) as Decision;
    expect(decision.status).toBe('approved');
    expect(decision.released).toEqual([{ stepId: 's1', releasedAt: release.releasedAt, outcome: 'applied' }]);

    // No action bypasses an unmet dependency: the reply waits for the rebooking's applied report.
    expect(await stack.client.verifyStep(decision, byId('s3'))).toEqual({
      ok: false,
      reason: 'dependency_not_applied',
      message: 'step s3 depends on s2, not reported applied yet',
    });
    expect(await stack.client.verifyStep(decision, byId('s2'))).toMatchObject({ ok: true });
    expect((await stack.client.reportOutcome(runId, 's2', { status: 'applying' })).ok).toBe(true);
    expect(await stack.client.verifyStep(decision, byId('s3'))).toMatchObject({
      ok: false,
      reason: 'dependency_not_applied',
    });
    expect((await stack.client.reportOutcome(runId, 's2', { status: 'applied' })).ok).toBe(true);
    expect(await stack.client.verifyStep(decision, byId('s3'))).toMatchObject({ ok: true });
  });
});
