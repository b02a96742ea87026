/** Policy `continue`: which routes carry it (the config refuses the rules that may not: test/approvals/releases.test.ts). */
import { describe, expect, it } from 'vitest';
import { type PlanEnvelope, type PolicyRule, routeStep } from '../../src/pipeline/index.ts';

const plan: PlanEnvelope = {
  runId: 'run-1',
  agent: 'a',
  expiresAt: '2026-04-01T11:00:00Z',
  steps: [{ id: 's1', tool: 'lookup', args: {} }],
};
const step = { id: 's1', tool: 'lookup', args: {} };

describe('routeStep: continue', () => {
  it('marks auto and review routes of a continue rule, and only those', () => {
    const routeBy = (policyRule: PolicyRule) => {
      const routed = routeStep(step, plan, [policyRule]);
      if (!routed.ok) throw new Error(routed.message);
      return routed.route;
    };
    expect(routeBy({ name: 'early', tool: 'lookup', route: 'auto', continue: true })).toEqual({
      kind: 'auto',
      rule: 'early',
      continue: true,
    });
    expect(
      routeBy({ name: 'early-review', tool: 'lookup', route: 'review', approvers: 'ops', continue: true }),
    ).toMatchObject({ kind: 'review', group: 'ops', continue: true });
    expect(routeBy({ name: 'plain', tool: 'lookup', route: 'auto' })).toEqual({
      kind: 'auto',
      rule: 'plain',
    });
    expect(routeBy({ name: 'off', tool: 'lookup', route: 'auto', continue: false })).toEqual({
      kind: 'auto',
      rule: 'off',
    });
    // A step no continue rule matches waits for the whole plan: the default is fail closed.
    const unmatched = routeStep({ ...step, tool: 'other' }, plan, [
      { name: 'early', tool: 'lookup', route: 'auto', continue: true },
    ]);
    expect(unmatched.ok && unmatched.route.kind).toBe('block');
  });
});
