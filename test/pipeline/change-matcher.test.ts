/**
 * Policy rules matching on the change set (issue 19): risk follows what a step will change in the
 * world — a changed path, an entity type, a violated invariant, an unknown impact — not only the
 * tool's name. A rule with a change-set matcher never matches a step without a change set.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineConfig, isConfigError } from '../../src/config/index.ts';
import {
  type ChangeMatcher,
  type ChangeSet,
  defineTool,
  matchesChanges,
  type PolicyRule,
  text,
  validate,
} from '../../src/pipeline/index.ts';

const NOW = Date.parse('2026-04-01T10:00:00Z');

/** What each delivery's preview answers, by id: the test's "freight system". */
const world: Record<string, ChangeSet> = {
  dl_date: {
    target: { type: 'delivery', id: 'dl_date', version: '3' },
    changes: [{ path: 'delivery.date', label: 'delivery date', before: '2026-04-03', after: '2026-04-06' }],
    related: [{ entity: { type: 'route', id: 'rt_1' }, impact: 'read', source: 'declared' }],
    invariants: [{ name: 'within_window', label: 'inside the booked window', status: 'preserved' }],
  },
  dl_note: {
    target: { type: 'delivery', id: 'dl_note', version: '8' },
    changes: [{ path: 'delivery.instructions', label: 'driver instructions', before: '', after: 'ring' }],
    related: [{ entity: { type: 'invoice', id: 'in_1' }, impact: 'write', source: 'observed' }],
    invariants: [],
  },
  dl_late: {
    target: { type: 'delivery', id: 'dl_late', version: '1' },
    changes: [{ path: 'delivery.window.end', label: 'end of window', before: '12:00', after: '18:00' }],
    related: [{ entity: { type: 'customer', id: 'cu_1' }, impact: 'unknown', source: 'observed' }],
    invariants: [
      { name: 'within_window', label: 'inside the booked window', status: 'violated', evidence: 'ends Fri' },
    ],
  },
};

const move = defineTool({
  name: 'move_delivery',
  title: 'Move delivery',
  effect: 'write',
  args: z.strictObject({ delivery_id: text() }),
  preview: async (args) => {
    const changeSet = world[args.delivery_id];
    if (changeSet === undefined) throw new Error(`no delivery ${args.delivery_id}`);
    return changeSet;
  },
});
const note = defineTool({
  name: 'add_note',
  title: 'Add note',
  effect: 'write',
  args: z.strictObject({ text: text() }),
});

function config(policy: PolicyRule[]) {
  return defineConfig({
    tools: [move, note],
    agents: {
      ops: { tools: ['move_delivery', 'add_note'], channel: 'C0OPS', secret: 'ops-secret-0123456789abcdef' },
    },
    groups: { operators: ['U0OP1'], leads: ['U0LEAD1'], safety: ['U0SAFE1'] },
    policy,
    authoring: { operators: '*' },
  });
}

/** The rule that routed each step of a plan moving these deliveries (and one note). */
async function rulesFor(policy: PolicyRule[], deliveries: readonly string[]): Promise<string[]> {
  const result = await validate(
    {
      runId: 'run-policy',
      agent: 'ops',
      expiresAt: new Date(NOW + 3_600_000).toISOString(),
      steps: [
        ...deliveries.map((id) => ({ tool: 'move_delivery', args: { delivery_id: id } })),
        { tool: 'add_note', args: { text: 'hello' } },
      ],
    },
    { config: config(policy).pipeline, now: NOW },
  );
  if (!result.ok) throw new Error(JSON.stringify(result.diagnostics));
  return result.plan.steps.map((step) => `${step.route.kind}:${step.route.rule}`);
}

const fallback: PolicyRule = { name: 'rest', tool: '*', route: 'auto' };

describe('policy: change-set matchers', () => {
  it('any step that changes delivery.date goes to the leads; the others fall through', async () => {
    const policy: PolicyRule[] = [
      {
        name: 'date-moves',
        tool: '*',
        changes: { paths: ['delivery.date'] },
        route: 'review',
        approvers: 'leads',
      },
      fallback,
    ];
    expect(await rulesFor(policy, ['dl_date', 'dl_note'])).toEqual([
      'review:date-moves',
      'auto:rest',
      'auto:rest',
    ]);
  });

  it('a path matches the fields under it', async () => {
    const policy: PolicyRule[] = [
      {
        name: 'windows',
        tool: '*',
        changes: { paths: ['delivery.window'] },
        route: 'review',
        approvers: 'leads',
      },
      fallback,
    ];
    expect(await rulesFor(policy, ['dl_late', 'dl_date'])).toEqual([
      'review:windows',
      'auto:rest',
      'auto:rest',
    ]);
  });

  it('an entity type matches the target or a related entity the step does more than read', async () => {
    const policy: PolicyRule[] = [
      {
        name: 'invoices',
        tool: '*',
        changes: { entityTypes: ['invoice'] },
        route: 'review',
        approvers: 'leads',
      },
      { name: 'routes', tool: '*', changes: { entityTypes: ['route'] }, route: 'block', reason: 'no' },
      fallback,
    ];
    // dl_date only reads its route, so `routes` does not match it.
    expect(await rulesFor(policy, ['dl_note', 'dl_date'])).toEqual([
      'review:invoices',
      'auto:rest',
      'auto:rest',
    ]);
  });

  it('any violated invariant, or one named, routes by the rule; a preserved one does not', async () => {
    const any: PolicyRule[] = [
      { name: 'broken', tool: '*', changes: { violated: true }, route: 'review', approvers: 'safety' },
      fallback,
    ];
    const named: PolicyRule[] = [
      { name: 'other', tool: '*', changes: { violated: ['weight_limit'] }, route: 'block', reason: 'x' },
      { name: 'window', tool: '*', changes: { violated: ['within_window'] }, route: 'block', reason: 'x' },
      fallback,
    ];
    expect(await rulesFor(any, ['dl_late', 'dl_date'])).toEqual(['review:broken', 'auto:rest', 'auto:rest']);
    expect(await rulesFor(named, ['dl_late', 'dl_date'])).toEqual(['block:window', 'auto:rest', 'auto:rest']);
  });

  it('an unknown impact stays unknown and can be routed on', async () => {
    const policy: PolicyRule[] = [
      { name: 'unknowns', tool: '*', changes: { unknownImpact: true }, route: 'review', approvers: 'leads' },
      fallback,
    ];
    expect(await rulesFor(policy, ['dl_late', 'dl_note'])).toEqual([
      'review:unknowns',
      'auto:rest',
      'auto:rest',
    ]);
  });

  it('every criterion given must hold', () => {
    const changeSet = world.dl_late as ChangeSet;
    expect(matchesChanges({ paths: ['delivery.window'], violated: true }, changeSet)).toBe(true);
    expect(matchesChanges({ paths: ['delivery.window'], entityTypes: ['invoice'] }, changeSet)).toBe(false);
    expect(matchesChanges({ paths: ['delivery.win'] }, changeSet)).toBe(false);
  });

  it('never matches a step without a change set: a failed preview falls through, unverified, to review', async () => {
    const policy: PolicyRule[] = [
      { name: 'anything', tool: '*', changes: { entityTypes: ['delivery'] }, route: 'block', reason: 'x' },
      fallback,
    ];
    expect(matchesChanges({ entityTypes: ['delivery'] }, undefined)).toBe(false);
    // dl_gone's preview throws: no change set, so `anything` does not match; `rest` says auto, but the
    // step could not be verified, so it goes to review (the first group that may write the tool).
    expect(await rulesFor(policy, ['dl_gone'])).toEqual(['review:rest (could not verify)', 'auto:rest']);
  });
});

describe('policy: change-set matchers in the config', () => {
  const problems = (policy: PolicyRule[]) => {
    try {
      config(policy);
      return [];
    } catch (error) {
      if (!isConfigError(error)) throw error;
      return error.problems;
    }
  };

  it('refuses a matcher that names nothing, an unknown criterion, or a value of the wrong kind', () => {
    expect(problems([{ tool: '*', changes: {}, route: 'auto' }])).toEqual([
      'policy[0] (*#1).changes: name at least one of paths, entityTypes, violated, unknownImpact',
    ]);
    expect(
      problems([
        {
          tool: '*',
          changes: { path: ['delivery.date'] } as unknown as ChangeMatcher,
          route: 'auto',
        },
      ]),
    ).toEqual([expect.stringMatching(/^policy\[0\]\.changes: .*path/)]);
    expect(
      problems([{ tool: '*', changes: { violated: 'all' } as unknown as ChangeMatcher, route: 'auto' }]),
    ).toEqual([expect.stringMatching(/^policy\[0\]\.changes\.violated: /)]);
    expect(problems([{ tool: '*', changes: { paths: [] }, route: 'auto' }])).toEqual([
      expect.stringMatching(/^policy\[0\]\.changes\.paths: /),
    ]);
  });

  it('refuses a matcher on tools without a preview: it could never match', () => {
    expect(
      problems([{ tool: 'add_note', changes: { violated: true }, route: 'review', approvers: 'leads' }]),
    ).toEqual([
      'policy[0] (add_note#1).changes: none of the tools it covers has a preview, so it can never match',
    ]);
  });

  it('puts the matcher in the config digest', () => {
    const base: PolicyRule = { name: 'r', tool: '*', route: 'review', approvers: 'leads' };
    const digests = new Set([
      config([base]).digest,
      config([{ ...base, changes: { paths: ['delivery.date'] } }]).digest,
      config([{ ...base, changes: { paths: ['delivery.window'] } }]).digest,
      config([{ ...base, changes: { violated: true } }]).digest,
    ]);
    expect(digests.size).toBe(4);
  });
});
