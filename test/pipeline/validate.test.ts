import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { addedRefundStep } from '../../examples/freight/plans.ts';
import { issueRefund } from '../../examples/freight/tools.ts';
import {
  DIAGNOSTIC_CODES,
  type DiagnosticCode,
  defineTool,
  money,
  type PipelineConfig,
  stepDigest,
  text as textField,
  type ValidationContext,
  validate,
} from '../../src/pipeline/index.ts';
import { type } from '../../src/pipeline/phases/type.ts';
import { freightConfig, freightContext, NOW, plan } from '../support/freight.ts';

async function rejected(raw: unknown, ctx: ValidationContext = freightContext()) {
  const result = await validate(raw, ctx);
  if (result.ok) throw new Error('expected the plan to be rejected');
  return result;
}

async function accepted(raw: unknown, ctx: ValidationContext = freightContext()) {
  const result = await validate(raw, ctx);
  if (!result.ok) throw new Error(`expected the plan to pass, got ${JSON.stringify(result.diagnostics)}`);
  return result.plan;
}

const withConfig = (patch: Partial<PipelineConfig>): ValidationContext =>
  freightContext({ config: { ...freightConfig.pipeline, ...patch } });

const step = (tool: string, args: Record<string, unknown>, id?: string) => ({
  ...(id ? { id } : {}),
  tool,
  args,
});
const text = (value: unknown) => JSON.stringify(value);

/** One way to trigger each diagnostic code; typed as a Record so a new code without a case fails to compile. */
type Trigger = { raw: unknown; ctx?: ValidationContext; message: RegExp };
const triggers: Record<DiagnosticCode, () => Trigger | Promise<Trigger>> = {
  invalid_json: () => ({ raw: '{"runId": "r1",', message: /invalid JSON at line 1/ }),
  duplicate_key: () => ({
    raw: text(plan())
      .replace('"amount"', '"x"')
      .replace('"window":"2026-04-03"', '"window":"2026-04-03","window":"2026-05-01"'),
    message: /duplicate key "window"/,
  }),
  plan_too_large: () => ({
    raw: text(plan()),
    ctx: withConfig({ limits: { ...freightConfig.pipeline.limits, maxPlanBytes: 200 } }),
    message: /bytes; at most 200 are allowed/,
  }),
  too_many_steps: () => ({
    raw: plan({ steps: Array.from({ length: 51 }, () => step('add_note', { ticket_id: '1', note: 'n' })) }),
    message: /51 steps; at most 50/,
  }),
  no_steps: () => ({ raw: plan({ steps: [] }), message: /no steps/ }),
  string_too_long: () => ({
    raw: plan({ steps: [step('add_note', { ticket_id: '1', note: 'x'.repeat(10_001) })] }),
    message: /too long|characters/,
  }),
  too_deep: () => ({
    raw: `{"runId":"r","context":${'['.repeat(40)}${']'.repeat(40)}}`,
    message: /deep|nest/,
  }),
  non_integer_number: () => ({
    raw: text(plan({ steps: [step('issue_refund', { invoice_id: 'in_74119', amount: 1489.5 })] })),
    message: /1489\.5/,
  }),
  negative_zero: () => ({
    raw: plan({ steps: [step('issue_refund', { invoice_id: 'in_74119', amount: -0 })] }),
    message: /-0/,
  }),
  unsafe_integer: () => ({
    raw: text(plan({ steps: [step('issue_refund', { invoice_id: 'in_74119', amount: 1 })] })).replace(
      '"amount":1',
      '"amount":9007199254740993',
    ),
    message: /9007199254740993/,
  }),
  unknown_key: () => ({ raw: plan({ priority: 'high' }), message: /unknown field "priority"/ }),
  missing_field: () => {
    const { agent: _, ...withoutAgent } = plan();
    return { raw: withoutAgent, message: /agent is required/ };
  },
  invalid_field: () => ({
    raw: plan({ expiresAt: 'tomorrow' }),
    message: /expiresAt must be an ISO 8601 UTC time/,
  }),
  invalid_step_id: () => ({
    raw: plan({ steps: [step('add_note', { ticket_id: '1', note: 'n' }, 'a:b')] }),
    message: /id "a:b"/,
  }),
  duplicate_step_id: () => ({
    raw: plan({
      steps: [
        step('add_note', { ticket_id: '1', note: 'n' }, 'x'),
        step('add_note', { ticket_id: '1', note: 'm' }, 'x'),
      ],
    }),
    message: /id x is already used/,
  }),
  unknown_dependency: () => ({
    raw: plan({
      steps: [
        step('add_note', { ticket_id: '1', note: 'n' }, 'a'),
        { ...step('add_note', { ticket_id: '1', note: 'm' }, 'b'), dependsOn: ['zz'] },
      ],
    }),
    message: /step b depends on zz, which is not a step of this plan/,
  }),
  self_dependency: () => ({
    raw: plan({ steps: [{ ...step('add_note', { ticket_id: '1', note: 'n' }, 'a'), dependsOn: ['a'] }] }),
    message: /step a depends on itself/,
  }),
  dependency_cycle: () => ({
    raw: plan({
      steps: [
        step('add_note', { ticket_id: '1', note: 'n' }, 's1'),
        { ...step('add_note', { ticket_id: '1', note: 'm' }, 's2'), dependsOn: ['s4'] },
        { ...step('add_note', { ticket_id: '1', note: 'o' }, 's3'), dependsOn: ['s1'] },
        { ...step('add_note', { ticket_id: '1', note: 'p' }, 's4'), dependsOn: ['s3', 's2'] },
      ],
    }),
    message: /in a circle: s2 → s4 → s2/,
  }),
  unknown_agent: () => ({
    raw: plan({ agent: 'warehouse' }),
    message: /agent "warehouse" is not configured/,
  }),
  unknown_tool: () => ({
    raw: plan({ steps: [step('issue_refnd', {})] }),
    message: /no tool named "issue_refnd" \(did you mean issue_refund\?\)/,
  }),
  tool_not_allowed: () => ({
    raw: plan({ steps: [step('issue_refund', { invoice_id: 'in_74119', amount: 100 })] }),
    ctx: withConfig({ agents: { 'freight-ops': { tools: ['add_note'] } } }),
    message: /agent freight-ops may not call issue_refund/,
  }),
  missing_argument: () => ({
    raw: plan({ steps: [step('reschedule_delivery', { delivery_id: 'dl_55120' })] }),
    message: /step s1: window is required \(a date written YYYY-MM-DD\)/,
  }),
  unknown_argument: () => ({
    raw: plan({ steps: [step('add_note', { ticket_id: '1', note: 'n', pinned: true })] }),
    message: /add_note has no argument "pinned" \(it takes ticket_id, note\)/,
  }),
  invalid_argument: () => ({
    raw: plan({ steps: [step('issue_refund', { invoice_id: 'in_74119', amount: 'twenty' })] }),
    message: /^step s1: amount expected an integer number of cents, got the string "twenty"$/,
  }),
  check_failed: () => ({
    raw: plan({ steps: [step('issue_refund', { invoice_id: 'in_74119', amount: 200_000 })] }),
    message: /refund \$2,000\.00 exceeds the invoice balance \$1,489\.00/,
  }),
  may_author: async () => {
    const base = await accepted(plan());
    return {
      raw: { ...plan(), steps: [...plan().steps, addedRefundStep] },
      ctx: freightContext({ edit: { editorId: 'U0OP1', base } }),
      message: /step s4: your groups \(operators\) may not write issue_refund steps/,
    };
  },
  unapprovable: async () => {
    const base = await accepted(plan());
    const twoPersonFinance = { ...freightConfig.pipeline.groups, finance: ['U0FIN1', 'U0FIN2'] };
    return {
      raw: { ...plan(), steps: [...plan().steps, addedRefundStep] },
      ctx: freightContext({
        config: { ...freightConfig.pipeline, groups: twoPersonFinance },
        edit: { editorId: 'U0FIN1', base },
      }),
      message:
        /needs 2 finance approvals from people other than its author, but finance has only 1 other member/,
    };
  },
  immutable_field: async () => {
    const base = await accepted(plan());
    return {
      raw: plan({ expiresAt: new Date(NOW + 48 * 3_600_000).toISOString() }),
      ctx: freightContext({ edit: { editorId: 'U0FIN1', base } }),
      message: /an edit cannot change expiresAt/,
    };
  },
  expiry_out_of_bounds: () => ({
    raw: plan({ expiresAt: '2026-03-31T10:00:00Z' }),
    message: /expired at 2026-03-31T10:00:00Z/,
  }),
  blocked: () => ({
    raw: { ...plan(), ifBlocked: 'refuse' },
    ctx: withConfig({ policy: freightConfig.pipeline.policy.slice(0, 1) }),
    message: /step s2: no policy rule covers tool reschedule_delivery/,
  }),
};

describe('validate: every diagnostic code', () => {
  const codes = Object.values(DIAGNOSTIC_CODES).flat();
  it.each(codes)('%s is produced, by its own phase, with an actionable message', async (code) => {
    const { raw, ctx, message } = await triggers[code]();
    const result = await rejected(raw, ctx);
    const found = result.diagnostics.find((d) => d.code === code);
    expect(found, JSON.stringify(result.diagnostics)).toBeDefined();
    expect(found?.phase).toBe(result.phase);
    expect(DIAGNOSTIC_CODES[result.phase] as readonly string[]).toContain(code);
    expect(found?.message).toMatch(message);
  });
});

describe('validate: phases', () => {
  it('stops at the first phase that rejects and names it', async () => {
    // Both an unknown tool (resolve) and a bad argument (type): only resolve is reported.
    const result = await rejected(
      plan({ steps: [step('nope', {}), step('issue_refund', { invoice_id: 'in_74119', amount: 'x' })] }),
    );
    expect(result.phase).toBe('resolve');
    expect(result.diagnostics.map((d) => d.code)).toEqual(['unknown_tool']);
  });

  it('reports every problem of the rejecting phase, each with its step and path', async () => {
    const result = await rejected(
      plan({
        steps: [
          step('issue_refund', { invoice_id: 7, amount: '20' }),
          step('reschedule_delivery', { delivery_id: 'dl_55120', window: '3 April' }),
        ],
      }),
    );
    expect(result.phase).toBe('type');
    expect(result.diagnostics.map((d) => [d.stepId, d.path?.join('.')])).toEqual([
      ['s1', 'invoice_id'],
      ['s1', 'amount'],
      ['s2', 'window'],
    ]);
  });

  it('does not coerce: "20" is not 20', async () => {
    const result = await rejected(
      plan({ steps: [step('issue_refund', { invoice_id: 'in_74119', amount: '20' })] }),
    );
    expect(result.diagnostics[0]?.message).toBe(
      'step s1: amount expected an integer number of cents, got the string "20"',
    );
  });

  it('accepts raw text and objects alike and gives the same plan', async () => {
    expect(await accepted(text(plan()))).toEqual(await accepted(plan()));
  });

  it('assigns s1, s2… to steps without ids, skipping ids the agent already used', async () => {
    const validated = await accepted(
      plan({
        steps: [
          step('add_note', { ticket_id: '1', note: 'a' }),
          step('add_note', { ticket_id: '1', note: 'b' }, 's1'),
          step('add_note', { ticket_id: '1', note: 'c' }),
        ],
      }),
    );
    expect(validated.steps.map((s) => s.id)).toEqual(['s2', 's1', 's3']);
  });

  it('returns a deep-frozen plan and never freezes or aliases the caller’s object', async () => {
    const input = plan();
    const validated = await accepted(input);
    expect(Object.isFrozen(validated)).toBe(true);
    expect(Object.isFrozen(validated.steps[1]?.args)).toBe(true);
    expect(Object.isFrozen(input.steps[1]?.args)).toBe(false);
    expect(validated.steps[1]?.args).not.toBe(input.steps[1]?.args);
  });

  it('binds each step to the digest of its tool and args', async () => {
    const validated = await accepted(plan());
    for (const s of validated.steps) expect(s.digest).toBe(stepDigest({ tool: s.tool, args: s.args }));
    expect(validated.digest).toMatch(/^[0-9a-f]{64}$/);
  });

  it('routes by arguments: a small refund needs one finance approval, a large one two', async () => {
    const small = await accepted(
      plan({ steps: [step('issue_refund', { invoice_id: 'in_74121', amount: 4_500 })] }),
    );
    const large = await accepted(
      plan({ steps: [step('issue_refund', { invoice_id: 'in_74119', amount: 148_900 })] }),
    );
    expect(small.steps[0]?.route).toMatchObject({ kind: 'review', group: 'finance', approvals: 1 });
    expect(large.steps[0]?.route).toMatchObject({
      kind: 'review',
      group: 'finance',
      approvals: 2,
      distinctFromAuthor: true,
    });
  });

  it('blocks a step no policy rule covers, so it can never be approved by accident', async () => {
    const ctx = withConfig({ policy: freightConfig.pipeline.policy.slice(0, 1) });
    const validated = await accepted(plan(), ctx);
    expect(validated.steps[1]?.route).toEqual({
      kind: 'block',
      rule: 'default',
      reason: 'no policy rule covers tool reschedule_delivery',
    });
  });

  it('keeps a blocked step for people to see unless the submission says ifBlocked: refuse', async () => {
    const ctx = withConfig({ policy: freightConfig.pipeline.policy.slice(0, 1) });
    const reviewed = await accepted({ ...plan(), ifBlocked: 'review' }, ctx);
    expect(reviewed.steps[1]?.route.kind).toBe('block');
    expect(reviewed).not.toHaveProperty('ifBlocked');
    const refused = await rejected({ ...plan(), ifBlocked: 'refuse' }, ctx);
    expect(refused.phase).toBe('authorize');
    expect(refused.diagnostics.map((d) => [d.code, d.stepId, d.message])).toEqual([
      ['blocked', 's2', 'step s2: no policy rule covers tool reschedule_delivery'],
      ['blocked', 's3', 'step s3: no policy rule covers tool send_reply'],
    ]);
    expect((await rejected({ ...plan(), ifBlocked: 'never' })).diagnostics[0]).toMatchObject({
      code: 'invalid_field',
      message: 'ifBlocked must be "review" or "refuse", got the string "never"',
    });
  });

  it('fails closed when a tool check throws', async () => {
    const throwing = {
      ...freightConfig.pipeline.policy[0]!,
      when: () => {
        throw new Error('boom');
      },
    };
    const result = await rejected(
      plan(),
      withConfig({ policy: [throwing, ...freightConfig.pipeline.policy] }),
    );
    expect(result.diagnostics[0]).toMatchObject({ code: 'check_failed', stepId: 's1' });
    expect(result.diagnostics[0]?.message).toMatch(/boom/);
  });

  it('refuses an expiry further ahead than the configured maximum', async () => {
    const result = await rejected(plan({ expiresAt: new Date(NOW + 8 * 86_400_000).toISOString() }));
    expect(result.diagnostics[0]?.message).toMatch(/at most 168h/);
  });
});

describe('validate: money in the person’s currency', () => {
  const refund = (amount: unknown) =>
    plan({ steps: [step('issue_refund', { invoice_id: 'in_74119', amount })] });
  /** The freight config with issue_refund's amount replaced by `amount`. */
  const refundAmount = (amount: z.ZodType<number>): ValidationContext => {
    const tool = defineTool({ ...issueRefund, args: z.strictObject({ invoice_id: textField(), amount }) });
    return withConfig({ tools: new Map([...freightConfig.pipeline.tools, [tool.name, tool]]) });
  };
  const invalid = (message: string) => [
    { phase: 'type', code: 'invalid_argument', stepId: 's1', path: ['amount'], message },
  ];

  it('refuses a $0.00 refund at the amount, in dollars', async () => {
    expect((await rejected(refund(0))).diagnostics).toEqual(
      invalid('step s1: amount must be at least $0.01, got $0.00'),
    );
  });

  it('refuses a negative refund in dollars, never as a count of cents', async () => {
    const { diagnostics } = await rejected(refund(-500));
    expect(diagnostics).toEqual(invalid('step s1: amount must be at least $0.01, got -$5.00'));
    expect(diagnostics[0]?.message).not.toMatch(/500/);
  });

  it('accepts zero when the tool allows it with min: 0', async () => {
    expect((await accepted(refund(0), refundAmount(money({ min: 0 })))).steps[0]?.args.amount).toBe(0);
    expect((await rejected(refund(-1), refundAmount(money({ min: 0 })))).diagnostics).toEqual(
      invalid('step s1: amount must be at least $0.00, got -$0.01'),
    );
  });

  it('accepts negatives down to a negative min and words the bound in dollars', async () => {
    const credit = refundAmount(money({ min: -10_000 }));
    expect((await accepted(refund(-5_000), credit)).steps[0]?.args.amount).toBe(-5_000);
    expect((await rejected(refund(-10_001), credit)).diagnostics).toEqual(
      invalid('step s1: amount must be at least -$100.00, got -$100.01'),
    );
  });

  it('words a maximum in dollars, from money({ max }) or a later .max()', async () => {
    expect((await rejected(refund(148_900), refundAmount(money({ max: 50_000 })))).diagnostics).toEqual(
      invalid('step s1: amount must be at most $500.00, got $1,489.00'),
    );
    expect((await rejected(refund(148_900), refundAmount(money().max(50_000)))).diagnostics).toEqual(
      invalid('step s1: amount must be at most $500.00, got $1,489.00'),
    );
  });

  it('words other bounds in the amount’s own currency', async () => {
    expect((await rejected(refund(0), refundAmount(money({ currency: 'JPY' })))).diagnostics).toEqual(
      invalid('step s1: amount must be at least ¥1, got ¥0'),
    );
    expect((await rejected(refund(150), refundAmount(money().multipleOf(100)))).diagnostics).toEqual(
      invalid('step s1: amount must be a multiple of $1.00, got $1.50'),
    );
    expect((await rejected(refund(0), refundAmount(money({ min: 0 }).positive()))).diagnostics).toEqual(
      invalid('step s1: amount must be more than $0.00, got $0.00'),
    );
  });

  it('labels counts it cannot show as money with their unit, should one get past parse', async () => {
    // parse refuses fractions and unsafe integers; the type phase alone must still not say "12.5" bare.
    const steps = (amount: number) => [
      { id: 's1', tool: 'issue_refund', args: { invoice_id: 'in_74119', amount } },
    ];
    const envelope = { runId: 'r1', agent: 'freight-ops', expiresAt: plan().expiresAt as string };
    const messages = (amount: number) => {
      const result = type({ ...envelope, steps: steps(amount) }, freightContext());
      return result.ok ? [] : result.diagnostics.map((d) => d.message);
    };
    expect(messages(12.5)).toEqual(['step s1: amount must be a whole number of cents, got 12.5 cents']);
    expect(messages(2 ** 60)).toEqual([
      `step s1: amount is outside the range of amounts (got ${2 ** 60} cents)`,
    ]);
  });
});

const seedBase = await accepted(plan());

describe('validate: the seed scenario (docs/architecture.md §6)', () => {
  const base = seedBase;
  const edited = { ...plan(), steps: [...plan().steps, addedRefundStep] };

  it('the generated 3-step plan validates', async () => {
    expect(base.steps.map((s) => [s.id, s.tool, s.route.kind])).toEqual([
      ['s1', 'add_note', 'auto'],
      ['s2', 'reschedule_delivery', 'review'],
      ['s3', 'send_reply', 'review'],
    ]);
  });

  it('an operator adding a refund fails authorize with may_author at the added step', async () => {
    const result = await rejected(edited, freightContext({ edit: { editorId: 'U0OP1', base } }));
    expect(result.phase).toBe('authorize');
    expect(result.diagnostics).toEqual([expect.objectContaining({ code: 'may_author', stepId: 's4' })]);
  });

  it('the same edit by a finance user passes, routes the refund to finance and flags the foreign account', async () => {
    const validated = await accepted(edited, freightContext({ edit: { editorId: 'U0FIN1', base } }));
    const refund = validated.steps[3];
    expect(refund?.route).toMatchObject({ kind: 'review', group: 'finance', approvals: 2 });
    expect(refund?.annotations).toEqual([
      {
        level: 'warning',
        message:
          'invoice in_74119 belongs to Halvorsen Freight, not Nordvik Logistics (the account on ticket #74991)',
      },
    ]);
    expect(refund?.summary).toBe('Refund $1,489.00 on invoice in_74119');
    // untouched steps keep their digests, so their approvals survive the edit
    expect(validated.steps.slice(0, 3).map((s) => s.digest)).toEqual(base.steps.map((s) => s.digest));
  });

  it('an operator may change what operators may write', async () => {
    const changed = {
      ...plan(),
      steps: plan().steps.map((s) =>
        s.id === 's2' ? { ...s, args: { ...s.args, window: '2026-04-06' } } : s,
      ),
    };
    expect(
      (await accepted(changed, freightContext({ edit: { editorId: 'U0OP1', base } }))).steps[1]?.args,
    ).toEqual({
      delivery_id: 'dl_55120',
      window: '2026-04-06',
    });
  });

  it('someone in no group may not write any step', async () => {
    const changed = {
      ...plan(),
      steps: plan().steps.map((s) => (s.id === 's1' ? { ...s, args: { ...s.args, note: 'x' } } : s)),
    };
    const result = await rejected(changed, freightContext({ edit: { editorId: 'U0NOBODY', base } }));
    expect(result.diagnostics[0]?.message).toMatch(/you are in no group that may write add_note/);
  });
});

describe('validate: properties', () => {
  it('never throws on arbitrary JSON values or text', async () => {
    const ctx = freightContext();
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), async (value) => {
        await validate(value, ctx);
        await validate(JSON.stringify(value) ?? '', ctx);
      }),
      { numRuns: 300 },
    );
  });

  it('never throws on plan-shaped input with arbitrary steps', async () => {
    const ctx = freightContext();
    const arbitraryStep = fc.record(
      {
        id: fc.oneof(fc.string(), fc.constantFrom('s1', 's2')),
        tool: fc.constantFrom('add_note', 'issue_refund', 'send_reply', 'reschedule_delivery', 'x'),
        args: fc.dictionary(
          fc.constantFrom('ticket_id', 'note', 'amount', 'invoice_id', 'window', 'body', 'zz'),
          fc.jsonValue(),
        ),
      },
      { requiredKeys: ['tool'] },
    );
    await fc.assert(
      fc.asyncProperty(fc.array(arbitraryStep, { maxLength: 6 }), fc.anything(), async (steps, extra) => {
        const result = await validate(plan({ steps }), ctx);
        if (!result.ok) expect(result.diagnostics.length).toBeGreaterThan(0);
        await validate({ ...plan(), context: extra }, ctx);
      }),
      { numRuns: 300 },
    );
  });
});
