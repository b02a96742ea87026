import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { freightSteps } from '../../examples/freight/plans.ts';
import { freightTools } from '../../examples/freight/tools.ts';
import {
  defineTool,
  findQuote,
  findStaleQuotes,
  formatMoney,
  isoDate,
  longText,
  money,
  moneyToDecimal,
  type Step,
  type ToolDefinition,
  ToolDefinitionError,
  text,
  valueRenderings,
} from '../../src/pipeline/index.ts';
import { formatArgValue } from '../../views/arg-fields.ts';
import { formatDay } from '../../views/time.ts';

const tools = new Map<string, ToolDefinition>(
  freightTools.map((tool) => [tool.name, tool as ToolDefinition]),
);
const v1: Step[] = freightSteps.map((step) => ({ ...step, args: { ...step.args } }));
const withArgs = (steps: readonly Step[], id: string, args: Record<string, unknown>): Step[] =>
  steps.map((step) => (step.id === id ? { ...step, args: { ...step.args, ...args } as Step['args'] } : step));

describe('valueRenderings', () => {
  it('writes a date every way the issue lists, the card’s own form included, longest first', () => {
    const renderings = valueRenderings({ kind: 'date' }, '2026-04-03');
    for (const form of ['3 April', 'Fri 3 Apr', 'Friday 3 April', '2026-04-03', 'April 3', '3rd April']) {
      expect(renderings).toContain(form);
    }
    // What the card and the diff message show for the field.
    expect(renderings).toContain(formatDay('2026-04-03'));
    expect(renderings).toContain(formatArgValue({ kind: 'date' }, '2026-04-03'));
    expect(renderings[0]).toBe('Friday 3rd April 2026');
    expect(renderings).toEqual([...renderings].sort((a, b) => b.length - a.length));
    expect(valueRenderings({ kind: 'date' }, '2026-02-30')).toEqual([]);
  });

  it('writes money as the card, the edit form and people write it, never as a count of cents', () => {
    const renderings = valueRenderings({ kind: 'money', currency: 'USD' }, 148_900);
    expect(renderings).toEqual(['$1,489.00', '1,489.00', '1489.00', '$1,489', '1,489', '1489']);
    expect(renderings).toContain(formatMoney(148_900, 'USD'));
    expect(renderings).toContain(moneyToDecimal(148_900, 'USD'));
    expect(renderings).toContain(formatArgValue({ kind: 'money', currency: 'USD' }, 148_900));
    expect(renderings).not.toContain('148900');
    // Cents that are not zero are part of every form; a short bare number is not looked for.
    expect(valueRenderings({ kind: 'money', currency: 'USD' }, 148_950)).toEqual([
      '$1,489.50',
      '1,489.50',
      '1489.50',
    ]);
    expect(valueRenderings({ kind: 'money', currency: 'USD' }, 500)).toEqual(['$5.00', '5.00', '$5']);
    expect(valueRenderings({ kind: 'money', currency: 'JPY' }, 1500)).toContain('¥1,500');
  });

  it('keeps ids and choices verbatim; skips long text, short values and small numbers', () => {
    expect(valueRenderings({ kind: 'text' }, 'dl_55120')).toEqual(['dl_55120']);
    expect(valueRenderings({ kind: 'enum' }, 'express')).toEqual(['express']);
    expect(valueRenderings({ kind: 'text' }, 'ab')).toEqual([]);
    expect(valueRenderings({ kind: 'long_text' }, 'a whole reply')).toEqual([]);
    expect(valueRenderings({ kind: 'int' }, 12)).toEqual([]);
    expect(valueRenderings({ kind: 'int' }, 12_000)).toEqual(['12,000', '12000']);
  });
});

describe('findQuote', () => {
  const date = valueRenderings({ kind: 'date' }, '2026-04-03');
  const amount = valueRenderings({ kind: 'money', currency: 'USD' }, 148_900);

  it('returns the longest quote as written in the text', () => {
    expect(findQuote('We have rebooked it for Friday 3 April, before noon.', date)).toBe('Friday 3 April');
    expect(findQuote('rebooked for FRI 3 APR', date)).toBe('FRI 3 APR');
    expect(findQuote('see 2026-04-03', date)).toBe('2026-04-03');
    expect(findQuote('A refund of $1,489.00 is on its way', amount)).toBe('$1,489.00');
    expect(findQuote('refund 1489 USD', amount)).toBe('1489');
  });

  it('never finds a value inside a longer word or number', () => {
    expect(findQuote('delivered on 13 April', date)).toBeUndefined();
    expect(findQuote('on 3 Aprilis', date)).toBeUndefined();
    expect(findQuote('a refund of $1,489.50', amount)).toBeUndefined();
    expect(findQuote('a refund of $21,489.00', amount)).toBeUndefined();
    expect(findQuote('order 14890', amount)).toBeUndefined();
  });
});

describe('findStaleQuotes', () => {
  it('flags the reply that still says Friday 3 April after the delivery moved to 6 April (the demo’s edit)', () => {
    const v2 = withArgs(v1, 's2', { window: '2026-04-06' });
    expect(findStaleQuotes({ before: { steps: v1 }, after: { steps: v2 }, tools })).toEqual([
      {
        stepId: 's3',
        path: ['body'],
        quoted: 'Friday 3 April',
        changed: {
          stepId: 's2',
          tool: 'reschedule_delivery',
          path: ['window'],
          before: '2026-04-03',
          after: '2026-04-06',
          kind: 'date',
        },
      },
    ]);
  });

  it('says nothing once the reply is fixed in the same edit, or when nothing quotes the value', () => {
    const fixed = withArgs(withArgs(v1, 's2', { window: '2026-04-06' }), 's3', {
      body: 'Hi Marta, we have rebooked it for Monday 6 April.',
    });
    expect(findStaleQuotes({ before: { steps: v1 }, after: { steps: fixed }, tools })).toEqual([]);
    const noteOnly = withArgs(v1, 's1', { note: 'Customer called again.' });
    expect(findStaleQuotes({ before: { steps: v1 }, after: { steps: noteOnly }, tools })).toEqual([]);
  });

  it('does not flag a rendering the new value shares (only the year moved: "3 April" is still right)', () => {
    const dayOnly = withArgs(v1, 's3', { body: 'We have rebooked it for 3 April.' });
    const nextYear = withArgs(dayOnly, 's2', { window: '2027-04-03' });
    expect(findStaleQuotes({ before: { steps: dayOnly }, after: { steps: nextYear }, tools })).toEqual([]);
    // 3 April 2027 is a Saturday: "Friday 3 April" is wrong now.
    const moved = withArgs(v1, 's2', { window: '2027-04-03' });
    expect(
      findStaleQuotes({ before: { steps: v1 }, after: { steps: moved }, tools }).map((q) => q.quoted),
    ).toEqual(['Friday 3 April']);
  });

  it('compares declared same-thing fields by value: the note’s ticket still 74991 after the reply moved to 74992', () => {
    const moved = withArgs(v1, 's3', { ticket_id: '74992' });
    const quotes = findStaleQuotes({ before: { steps: v1 }, after: { steps: moved }, tools });
    expect(quotes.map((q) => [q.stepId, q.path, q.quoted])).toEqual([['s1', ['ticket_id'], '74991']]);
  });

  it('finds an amount in a declared money field and in any other step’s text; an empty declaration opts out', () => {
    const refund = defineTool({
      name: 'issue_refund',
      title: 'Issue refund',
      effect: 'irreversible',
      args: z.strictObject({ invoice_id: text(), amount: money() }),
      sameThingAs: { amount: ['log_payment.amount'], invoice_id: [] },
    });
    const log = defineTool({
      name: 'log_payment',
      title: 'Log payment',
      effect: 'write',
      args: z.strictObject({ amount: money(), memo: longText() }),
    });
    const reply = defineTool({
      name: 'send_reply',
      title: 'Reply',
      effect: 'irreversible',
      args: z.strictObject({ body: longText() }),
    });
    const registry = new Map<string, ToolDefinition>(
      [refund, log, reply].map((tool) => [tool.name, tool as ToolDefinition]),
    );
    const before: Step[] = [
      { id: 's1', tool: 'issue_refund', args: { invoice_id: 'in_74119', amount: 148_900 } },
      { id: 's2', tool: 'log_payment', args: { amount: 148_900, memo: 'refund for in_74119' } },
      { id: 's3', tool: 'send_reply', args: { body: 'We refunded $1,489.00 on in_74119.' } },
    ];
    const after = withArgs(before, 's1', { invoice_id: 'in_74120', amount: 100_000 });
    expect(
      findStaleQuotes({ before: { steps: before }, after: { steps: after }, tools: registry }).map((q) => [
        q.stepId,
        q.path.join('.'),
        q.quoted,
        q.changed.path.join('.'),
      ]),
    ).toEqual([
      ['s2', 'amount', '$1,489.00', 'amount'],
      ['s3', 'body', '$1,489.00', 'amount'],
    ]);
  });
});

describe('sameThingAs in defineTool', () => {
  const args = z.strictObject({ when: isoDate(), note: longText() });
  it('refuses an argument the tool does not have, or a reference not written tool.argument', () => {
    expect(() =>
      defineTool({ name: 't', title: 'T', effect: 'write', args, sameThingAs: { whenever: [] } }),
    ).toThrow(ToolDefinitionError);
    expect(() =>
      defineTool({ name: 't', title: 'T', effect: 'write', args, sameThingAs: { when: ['send_reply'] } }),
    ).toThrow(/must be written '<tool>.<argument>'/);
    expect(
      defineTool({ name: 't', title: 'T', effect: 'write', args, sameThingAs: { when: ['send_reply.body'] } })
        .sameThingAs,
    ).toEqual({ when: ['send_reply.body'] });
  });
});
