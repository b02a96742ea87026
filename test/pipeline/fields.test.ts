import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  choice,
  describeExpected,
  fieldAt,
  fieldLabel,
  fieldRegistry,
  humanizeKey,
  isoDate,
  longText,
  money,
  text,
} from '../../src/pipeline/fields.ts';
import {
  defineTool,
  type Effect,
  type ToolArgsSchema,
  ToolDefinitionError,
} from '../../src/pipeline/tool.ts';

const accepts = (schema: z.ZodType, value: unknown) => schema.safeParse(value).success;

describe('money()', () => {
  const amount = money();

  it('accepts whole numbers of cents, from one cent to the largest safe integer', () => {
    for (const value of [1, 5, 148900, Number.MAX_SAFE_INTEGER]) expect(accepts(amount, value)).toBe(true);
  });

  it('refuses zero, negatives, fractions of a cent and non-finite numbers unless told otherwise', () => {
    for (const value of [0, 1.5, 0.01, -1, -148900, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53]) {
      expect(accepts(amount, value)).toBe(false);
    }
  });

  it('accepts zero when the tool sets min: 0, and still refuses negatives', () => {
    const free = money({ min: 0 });
    expect(accepts(free, 0)).toBe(true);
    expect(accepts(free, -1)).toBe(false);
  });

  it('accepts negatives down to a negative min, such as a credit of up to $100.00', () => {
    const adjustment = money({ min: -10_000 });
    for (const value of [-10_000, -5_000, 0, 148_900]) expect(accepts(adjustment, value)).toBe(true);
    expect(accepts(adjustment, -10_001)).toBe(false);
  });

  it('takes min and max together, both inclusive', () => {
    const ranged = money({ min: 100, max: 50_000 });
    expect([99, 100, 50_000, 50_001].map((value) => accepts(ranged, value))).toEqual([
      false,
      true,
      true,
      false,
    ]);
    expect(accepts(money({ min: 500, max: 500 }), 500)).toBe(true);
  });

  it('does not coerce: the string "20" is not 20 cents', () => {
    for (const value of ['20', '$20.00', '', null, true, [20], { cents: 20 }])
      expect(accepts(amount, value)).toBe(false);
  });

  it('hands the amount through unchanged', () => {
    expect(amount.parse(148900)).toBe(148900);
  });

  it('enforces a maximum when one is given', () => {
    const capped = money({ max: 50_000 });
    expect(accepts(capped, 50_000)).toBe(true);
    expect(accepts(capped, 50_001)).toBe(false);
  });

  it('records that the field is money, in USD unless told otherwise, with its label', () => {
    expect(fieldRegistry.get(money())).toEqual({ kind: 'money', currency: 'USD' });
    expect(fieldRegistry.get(money({ currency: 'JPY', label: 'Refund' }))).toEqual({
      kind: 'money',
      currency: 'JPY',
      label: 'Refund',
    });
  });

  it('keeps its metadata through a later .max()', () => {
    expect(fieldRegistry.get(money({ currency: 'EUR' }).max(10))).toMatchObject({
      kind: 'money',
      currency: 'EUR',
    });
  });

  it('refuses a min or max that is not a whole number of minor units, at definition time', () => {
    for (const bound of [0.5, -1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53]) {
      expect(() => money({ min: bound })).toThrow(ToolDefinitionError);
      expect(() => money({ max: bound })).toThrow(ToolDefinitionError);
    }
    expect(() => money({ max: 499.99 })).toThrow(
      new ToolDefinitionError('money(): max must be an integer number of cents, got 499.99'),
    );
    expect(() => money({ currency: 'JPY', min: 0.5 })).toThrow(
      new ToolDefinitionError('money(): min must be an integer amount of JPY, got 0.5'),
    );
  });

  it('refuses a min above the max, at definition time, naming both in minor units and money', () => {
    expect(() => money({ min: 50_000, max: 100 })).toThrow(
      new ToolDefinitionError(
        'money(): min 50000 ($500.00) is greater than max 100 ($1.00), so no amount would be accepted',
      ),
    );
    // The default min of one cent counts too.
    expect(() => money({ max: 0 })).toThrow(/min 1 \(\$0\.01\) is greater than max 0 \(\$0\.00\)/);
    expect(() => money({ min: 0, max: 0 })).not.toThrow();
  });

  it('refuses a currency that is not an upper-case ISO 4217 code, at definition time', () => {
    for (const currency of ['usd', 'US', 'DOLLARS', 'XYZ', '$']) {
      expect(() => money({ currency })).toThrow(ToolDefinitionError);
    }
    expect(() => money({ currency: 'usd' })).toThrow(
      'money(): "usd" is not an ISO 4217 currency code such as USD',
    );
  });
});

describe('isoDate()', () => {
  const date = isoDate({ label: 'New delivery date' });

  it('accepts calendar dates written YYYY-MM-DD, leap days included', () => {
    for (const value of ['2026-04-06', '2024-02-29', '2000-02-29']) expect(accepts(date, value)).toBe(true);
  });

  it('refuses impossible dates, other spellings, times and Date objects', () => {
    for (const value of [
      '2026-02-30',
      '2025-02-29',
      '1900-02-29',
      '2026-13-01',
      '06/04/2026',
      '2026-4-6',
      '20260406',
    ]) {
      expect(accepts(date, value)).toBe(false);
    }
    for (const value of ['2026-04-06T10:00:00Z', new Date('2026-04-06'), 20260406]) {
      expect(accepts(date, value)).toBe(false);
    }
  });

  it('records its label and no kind', () => {
    expect(fieldRegistry.get(date)).toEqual({ label: 'New delivery date' });
    expect(fieldRegistry.get(isoDate())).toEqual({});
  });
});

describe('longText()', () => {
  it('accepts text up to 3000 characters by default, and newlines', () => {
    const note = longText();
    expect(accepts(note, 'Driver called.\nCustomer agreed to Tuesday.')).toBe(true);
    expect(accepts(note, 'x'.repeat(3000))).toBe(true);
    expect(accepts(note, 'x'.repeat(3001))).toBe(false);
  });

  it('refuses empty text and non-strings', () => {
    for (const value of ['', 42, null, ['hello']]) expect(accepts(longText(), value)).toBe(false);
  });

  it('honours a custom maximum', () => {
    const reply = longText({ max: 2000 });
    expect(accepts(reply, 'x'.repeat(2000))).toBe(true);
    expect(accepts(reply, 'x'.repeat(2001))).toBe(false);
  });

  it('records that it is long text, for a multi-line input', () => {
    expect(fieldRegistry.get(longText({ label: 'Reply' }))).toEqual({ kind: 'long_text', label: 'Reply' });
  });
});

describe('text()', () => {
  it('accepts short text up to 200 characters by default', () => {
    expect(accepts(text(), 'in_74119')).toBe(true);
    expect(accepts(text(), 'x'.repeat(200))).toBe(true);
    expect(accepts(text(), 'x'.repeat(201))).toBe(false);
    expect(accepts(text({ max: 8 }), 'in_74119x')).toBe(false);
  });

  it('refuses empty text and does not coerce numbers to strings', () => {
    expect(accepts(text(), '')).toBe(false);
    expect(accepts(text(), 74119)).toBe(false);
  });

  it('records only its label', () => {
    expect(fieldRegistry.get(text({ label: 'Invoice' }))).toEqual({ label: 'Invoice' });
  });
});

describe('choice()', () => {
  const reason = choice(['damaged', 'late', 'lost'], { label: 'Reason' });

  it('accepts exactly the listed values', () => {
    for (const value of ['damaged', 'late', 'lost']) expect(accepts(reason, value)).toBe(true);
  });

  it('refuses anything else, including other casings', () => {
    for (const value of ['Damaged', 'stolen', '', 0, null]) expect(accepts(reason, value)).toBe(false);
  });

  it('records its label', () => {
    expect(fieldRegistry.get(reason)).toEqual({ label: 'Reason' });
  });
});

describe('fieldAt', () => {
  const amount = money({ currency: 'EUR' });
  const when = isoDate();
  const sku = text({ label: 'SKU' });
  const args = z.strictObject({
    invoice_id: text(),
    amount: amount.optional(),
    address: z.strictObject({ city: text(), zip: text().nullable() }),
    lines: z.array(z.strictObject({ sku, deliver_on: when.default('2026-01-01') })).optional(),
  });

  it('finds a top-level field', () => {
    expect(fieldAt(args, ['invoice_id'])).toBeInstanceOf(z.ZodString);
  });

  it('unwraps optional, nullable and default to the registered field', () => {
    expect(fieldAt(args, ['amount'])).toBe(amount);
    expect(fieldAt(args, ['address', 'zip'])).toBeInstanceOf(z.ZodString);
    expect(fieldAt(args, ['lines', 0, 'deliver_on'])).toBe(when);
  });

  it('walks into nested objects and array elements', () => {
    expect(fieldAt(args, ['address', 'city'])).toBeInstanceOf(z.ZodString);
    expect(fieldAt(args, ['lines', 3, 'sku'])).toBe(sku);
    expect(fieldAt(args, ['lines', 0])).toBeInstanceOf(z.ZodObject);
  });

  it('returns the schema itself for an empty path', () => {
    expect(fieldAt(args, [])).toBe(args);
  });

  it('returns undefined for paths the schema does not have', () => {
    expect(fieldAt(args, ['nope'])).toBeUndefined();
    expect(fieldAt(args, ['invoice_id', 'length'])).toBeUndefined();
    expect(fieldAt(args, ['lines', 'sku'])).toBeUndefined();
    expect(fieldAt(args, ['address', 0])).toBeUndefined();
    expect(fieldAt(args, ['address', 'city', 'x', 'y'])).toBeUndefined();
  });

  it('never walks into Object.prototype for keys such as "constructor"', () => {
    for (const key of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      expect(fieldAt(args, [key])).toBeUndefined();
      expect(describeExpected(fieldAt(args, [key]))).toBeUndefined();
    }
  });
});

describe('describeExpected', () => {
  it.each([
    ['USD money', money(), 'an integer number of cents'],
    ['EUR money', money({ currency: 'EUR' }), 'an integer number of cents'],
    ['yen', money({ currency: 'JPY' }), 'an integer amount of JPY'],
    ['dinars', money({ currency: 'BHD' }), 'an integer number of BHD minor units (1/1000 BHD)'],
    ['pounds', money({ currency: 'GBP' }), 'an integer number of GBP minor units (1/100 GBP)'],
    ['a choice', choice(['damaged', 'late']), 'one of "damaged", "late"'],
    ['a date', isoDate(), 'a date written YYYY-MM-DD'],
    ['a date-time', z.iso.datetime(), 'a date and time written like 2026-04-06T14:30:00Z'],
    ['an email', z.email(), 'an email address'],
    ['a URL', z.url(), 'a URL'],
    ['an integer', z.int(), 'an integer'],
    ['a number', z.number(), 'a number'],
    ['text', text(), 'text'],
    ['long text', longText(), 'text'],
    ['a boolean', z.boolean(), 'true or false'],
    ['a list', z.array(text()), 'a list'],
    ['an object', z.strictObject({}), 'an object'],
  ])('describes %s as %j', (_name, schema, expected) => {
    expect(describeExpected(schema)).toBe(expected);
  });

  it('says nothing for an unknown or missing field', () => {
    expect(describeExpected(undefined)).toBeUndefined();
    expect(describeExpected(z.null())).toBeUndefined();
  });
});

describe('humanizeKey and fieldLabel', () => {
  it.each([
    ['delivery_id', 'Delivery id'],
    ['amount', 'Amount'],
    ['new-window', 'New window'],
    ['ship__to', 'Ship to'],
    ['_internal_', 'Internal'],
    ['', ''],
  ])('turns %j into %j', (key, label) => {
    expect(humanizeKey(key)).toBe(label);
  });

  it('prefers the registered label, then the readable key', () => {
    expect(fieldLabel(text({ label: 'Invoice' }), 'invoice_id')).toBe('Invoice');
    expect(fieldLabel(text(), 'invoice_id')).toBe('Invoice id');
    expect(fieldLabel(undefined, 'invoice_id')).toBe('Invoice id');
  });
});

describe('defineTool', () => {
  const valid = {
    name: 'issue_refund',
    title: 'Issue refund',
    effect: 'irreversible' as const,
    args: z.strictObject({ invoice_id: text(), amount: money() }),
  };

  it('returns a frozen definition with the name, title, effect and schema given', () => {
    const tool = defineTool({ ...valid, summarize: (args) => `Refund ${args.amount} on ${args.invoice_id}` });
    expect(tool).toMatchObject({ name: 'issue_refund', title: 'Issue refund', effect: 'irreversible' });
    expect(tool.args).toBe(valid.args);
    expect(Object.isFrozen(tool)).toBe(true);
    expect(
      tool.summarize?.(
        { invoice_id: 'in_1', amount: 5 },
        { stepId: 's1', now: 0, plan: plan(), signal: new AbortController().signal },
      ),
    ).toBe('Refund 5 on in_1');
  });

  it('accepts nested objects and lists as long as every object is strict', () => {
    expect(() =>
      defineTool({
        ...valid,
        args: z.strictObject({
          address: z.strictObject({ city: text() }).optional(),
          lines: z.array(z.strictObject({ sku: text() })),
          kind: z.union([z.strictObject({ a: text() }), z.strictObject({ b: text() })]),
        }),
      }),
    ).not.toThrow();
  });

  it('refuses a non-strict args schema, which would let unknown arguments through', () => {
    const loose = z.object({ invoice_id: text() }) as unknown as ToolArgsSchema;
    expect(() => defineTool({ ...valid, args: loose })).toThrow(
      new ToolDefinitionError(
        'tool issue_refund: args must be z.strictObject({...}) so unknown arguments are rejected',
      ),
    );
    const passthrough = z.looseObject({ invoice_id: text() }) as unknown as ToolArgsSchema;
    expect(() => defineTool({ ...valid, args: passthrough })).toThrow(ToolDefinitionError);
  });

  it('refuses an args schema that is not an object at all', () => {
    expect(() => defineTool({ ...valid, args: z.string() as unknown as ToolArgsSchema })).toThrow(
      'args must be z.strictObject',
    );
  });

  it('refuses non-strict objects nested inside the args, naming where they are', () => {
    expect(() =>
      defineTool({
        ...valid,
        args: z.strictObject({
          address: z.object({ city: text() }).optional(),
          lines: z.array(z.object({ sku: text() })),
        }),
      }),
    ).toThrow(
      new ToolDefinitionError(
        'tool issue_refund: args.address, args.lines[] must be z.strictObject({...}) too, so unknown arguments are rejected',
      ),
    );
  });

  it.each(['Issue Refund', 'issue-refund', '1refund', '', 'refund!', `r${'x'.repeat(64)}`])(
    'refuses the tool name %j',
    (name) => {
      expect(() => defineTool({ ...valid, name })).toThrow(
        new ToolDefinitionError(
          `tool name ${JSON.stringify(name)} must be snake_case letters, digits and _ (at most 64)`,
        ),
      );
    },
  );

  it('accepts snake_case names up to 64 characters', () => {
    expect(defineTool({ ...valid, name: `r${'x'.repeat(63)}` }).name).toHaveLength(64);
    expect(defineTool({ ...valid, name: 'v2_refund' }).name).toBe('v2_refund');
  });

  it('refuses an empty or blank title', () => {
    for (const title of ['', '   ']) {
      expect(() => defineTool({ ...valid, title })).toThrow(
        new ToolDefinitionError('tool issue_refund: title must not be empty'),
      );
    }
  });

  it('refuses an effect other than read, write or irreversible', () => {
    expect(() => defineTool({ ...valid, effect: 'delete' as unknown as Effect })).toThrow(
      'tool issue_refund: effect must be one of read, write, irreversible (got "delete")',
    );
  });

  it('raises errors that carry a stable code', () => {
    try {
      defineTool({ ...valid, name: 'Issue Refund' });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ToolDefinitionError);
      expect(error).toMatchObject({ name: 'ToolDefinitionError', code: 'invalid_tool_definition' });
    }
  });
});

function plan() {
  return { runId: 'run_1', agent: 'freight-ops', expiresAt: '2026-04-06T14:30:00Z', steps: [] };
}
