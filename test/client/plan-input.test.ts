import { describe, expect, it } from 'vitest';
import { freightContext, freightSteps, freightSummary } from '../../examples/freight/plans.ts';
import { buildPlanText, type SubmitInput } from '../../src/client/index.ts';
import { validate } from '../../src/pipeline/index.ts';
import { freightConfig, NOW } from '../support/freight.ts';

const RUN = '019d47a8-6e00-7a3c-9f1e-4b2d8c0e1a77';
const HOUR = 3_600_000;
// As AgentClient.submit calls it: the agent's own run id if it gave one.
const build = (input: SubmitInput) =>
  buildPlanText(input, { agent: 'freight-ops', runId: input.runId ?? RUN, now: NOW });
const codes = (input: SubmitInput) => {
  const result = build(input);
  return result.ok ? [] : result.diagnostics.map((d) => [d.code, d.path?.join('.') ?? '']);
};
const steps = freightSteps.map((step) => ({ ...step, args: { ...step.args } }));

describe('submit: local checks and the envelope', () => {
  it('builds the envelope the server validates, leaving the expiry to the server’s default', async () => {
    const result = build({ summary: freightSummary, context: freightContext, steps });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.envelope).toMatchObject({ runId: RUN, agent: 'freight-ops' });
    expect(result.envelope).not.toHaveProperty('expiresAt');
    expect(result.envelope).not.toHaveProperty('expiresIn');
    const validated = await validate(result.text, { config: freightConfig.pipeline, now: NOW });
    expect(validated.ok && validated.plan.expiresAt).toBe('2026-04-02T10:00:00Z');
  });

  it('sends expiresIn for the server to count from receipt, or an absolute expiresAt in whole seconds', async () => {
    const inTwoHours = build({ steps, expiresIn: '2h' });
    expect(inTwoHours.ok && inTwoHours.envelope.expiresIn).toBe('2h');
    if (!inTwoHours.ok) throw new Error('expected the plan to build');
    const validated = await validate(inTwoHours.text, { config: freightConfig.pipeline, now: NOW });
    expect(validated.ok && validated.plan.expiresAt).toBe('2026-04-01T12:00:00Z');
    const at = build({ steps, expiresAt: new Date(NOW + 90_500) });
    expect(at.ok && at.envelope.expiresAt).toBe('2026-04-01T10:01:31Z');
  });

  it('refuses an expiresIn that is not a duration, before anything is sent', () => {
    expect(codes({ steps, expiresIn: 'soon' })).toEqual([['invalid_field', 'expiresIn']]);
    expect(codes({ steps, expiresIn: '2h', expiresAt: new Date(NOW + HOUR) })).toEqual([
      ['invalid_field', 'expiresAt'],
    ]);
  });

  it('refuses a float, -0 and an unsafe integer in args, naming the step and the path', () => {
    const bad = [
      { tool: 'issue_refund', args: { invoice_id: 'in_1', amount: 14.5 } },
      { tool: 'issue_refund', args: { invoice_id: 'in_1', amount: -0 } },
      { tool: 'issue_refund', args: { invoice_id: 'in_1', amount: 2 ** 60 } },
    ];
    expect(codes({ steps: bad })).toEqual([
      ['non_integer_number', 'steps.0.args.amount'],
      ['negative_zero', 'steps.1.args.amount'],
      ['unsafe_integer', 'steps.2.args.amount'],
    ]);
  });

  it('refuses undefined values and non-JSON objects', () => {
    const withUndefined = {
      steps: [{ tool: 'add_note', args: { note: undefined } }],
    } as unknown as SubmitInput;
    expect(codes(withUndefined)).toEqual([['invalid_json', 'steps.0.args.note']]);
    const withDate = {
      steps: [{ tool: 'add_note', args: { when: new Date(NOW) } }],
    } as unknown as SubmitInput;
    expect(codes(withDate)).toEqual([['invalid_json', 'steps.0.args.when']]);
  });

  it('refuses unknown fields, bad and duplicate step ids, and an empty plan', () => {
    expect(codes({ steps, extra: 1 } as unknown as SubmitInput)).toEqual([['unknown_key', 'extra']]);
    expect(codes({ steps: [{ id: 'has space', tool: 'add_note', args: {} }] })).toEqual([
      ['invalid_step_id', 'steps.0.id'],
    ]);
    expect(codes({ steps: [steps[0]!, { ...steps[1]!, id: 's1' }] })).toEqual([
      ['duplicate_step_id', 'steps.1.id'],
    ]);
    expect(codes({ steps: [] })).toEqual([['no_steps', 'steps']]);
  });

  it('refuses a missing tool or args with a message that says what is expected', () => {
    const result = build({ steps: [{ tool: 'add_note' }] } as unknown as SubmitInput);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.diagnostics[0]).toMatchObject({
      code: 'missing_field',
      stepId: '#1',
      message: 'args is required in step 1 (an object of arguments)',
    });
  });

  it('refuses a bad run id, a bad duration, both expiries, and an expiry in the past', () => {
    expect(codes({ steps, runId: 'run:1' })).toEqual([['invalid_field', 'runId']]);
    expect(codes({ steps, expiresIn: '2 hours' })).toEqual([['invalid_field', 'expiresIn']]);
    expect(codes({ steps, expiresIn: '2h', expiresAt: '2026-04-02T00:00:00Z' })).toEqual([
      ['invalid_field', 'expiresAt'],
    ]);
    expect(codes({ steps, expiresAt: '2026-03-31T00:00:00Z' })).toEqual([['invalid_field', 'expiresAt']]);
  });

  it('refuses more steps than the limit and a plan over the size limit', () => {
    const many = Array.from({ length: 51 }, (_, i) => ({ tool: 'add_note', args: { note: `n${i}` } }));
    expect(codes({ steps: many })).toEqual([['too_many_steps', 'steps']]);
    const huge = buildPlanText(
      { steps: [{ tool: 'add_note', args: { note: 'x'.repeat(5000) } }] },
      {
        agent: 'a',
        runId: RUN,
        now: NOW,
        limits: { maxPlanBytes: 4096, maxSteps: 50, maxDepth: 12, maxStringLength: 10_000 },
      },
    );
    expect(huge.ok ? [] : huge.diagnostics.map((d) => d.code)).toEqual(['plan_too_large']);
  });
});
