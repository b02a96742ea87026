import { z } from 'zod';
import { formatMoney, minorDigits } from './money.ts';
import { ToolDefinitionError } from './tool.ts';

/**
 * What a tool argument means beyond its JSON type. Views use it to pick an input element and to render
 * values; diagnostics use it to say what was expected ("an integer number of cents").
 */
export interface FieldMeta {
  /** The label people see; defaults to the argument name made readable. */
  readonly label?: string;
  readonly kind?: 'money' | 'long_text';
  /** ISO 4217 code, for `kind: 'money'`. */
  readonly currency?: string;
}

/** Registry of field metadata, keyed by schema instance (zod 4 registries hold no global state). */
export const fieldRegistry = z.registry<FieldMeta>();

/**
 * Money as an integer count of minor units (cents): `amount: money()` accepts 148900 for $1,489.00.
 * The currency must be an upper-case ISO 4217 code this runtime knows; anything else fails at start,
 * not when the first card is rendered.
 *
 * `min` and `max` are in minor units too. `min` defaults to 1, the smallest positive amount: a $0.00
 * refund or a negative payment is a mistake unless the tool says otherwise (`min: 0`, `min: -10_000`).
 */
export function money(options: { currency?: string; label?: string; min?: number; max?: number } = {}) {
  const currency = options.currency ?? 'USD';
  if (!/^[A-Z]{3}$/.test(currency) || !Intl.supportedValuesOf('currency').includes(currency)) {
    throw new ToolDefinitionError(
      `money(): ${JSON.stringify(currency)} is not an ISO 4217 currency code such as USD`,
    );
  }
  const { min = 1, max } = options;
  for (const [name, bound] of [
    ['min', min],
    ['max', max],
  ] as const) {
    if (bound !== undefined && !Number.isSafeInteger(bound)) {
      throw new ToolDefinitionError(
        `money(): ${name} must be ${describeMinorUnits(currency)}, got ${String(bound)}`,
      );
    }
  }
  if (max !== undefined && min > max) {
    // Written for whoever defines the tool, who wrote minor units: both forms.
    throw new ToolDefinitionError(
      `money(): min ${min} (${formatMoney(min, currency)}) is greater than max ${max} (${formatMoney(max, currency)}), so no amount would be accepted`,
    );
  }
  const base = z.int().min(min);
  const schema = max === undefined ? base : base.max(max);
  return schema.register(fieldRegistry, {
    kind: 'money',
    currency,
    ...(options.label === undefined ? {} : { label: options.label }),
  });
}

/** A calendar date, `YYYY-MM-DD`. */
export function isoDate(options: { label?: string } = {}) {
  return z.iso.date().register(fieldRegistry, labelOnly(options));
}

/** Free text meant for people (a reply, a note): rendered multi-line in edit forms. */
export function longText(options: { label?: string; max?: number } = {}) {
  return z
    .string()
    .min(1)
    .max(options.max ?? 3000)
    .register(fieldRegistry, { ...labelOnly(options), kind: 'long_text' });
}

/** A short single-line string such as an id. */
export function text(options: { label?: string; max?: number } = {}) {
  return z
    .string()
    .min(1)
    .max(options.max ?? 200)
    .register(fieldRegistry, labelOnly(options));
}

/** One of a fixed set of values. */
export function choice<const T extends readonly [string, ...string[]]>(
  values: T,
  options: { label?: string } = {},
) {
  return z.enum(values).register(fieldRegistry, labelOnly(options));
}

function labelOnly(options: { label?: string }): FieldMeta {
  return options.label === undefined ? {} : { label: options.label };
}

/** The schema for the argument at `path` inside an object schema, unwrapping optional/nullable. */
export function fieldAt(schema: z.ZodType, path: readonly (string | number)[]): z.ZodType | undefined {
  let current: z.ZodType | undefined = unwrap(schema);
  for (const key of path) {
    if (current === undefined) return undefined;
    if (current instanceof z.ZodObject && typeof key === 'string') {
      // Own keys only: a path such as `constructor` must not reach Object.prototype.
      current = Object.hasOwn(current.shape, key) ? unwrap(current.shape[key] as z.ZodType) : undefined;
    } else if (current instanceof z.ZodArray && typeof key === 'number') {
      current = unwrap(current.element as z.ZodType);
    } else {
      return undefined;
    }
  }
  return current;
}

function unwrap(schema: z.ZodType | undefined): z.ZodType | undefined {
  let current = schema;
  while (
    current instanceof z.ZodOptional ||
    current instanceof z.ZodNullable ||
    current instanceof z.ZodDefault
  ) {
    current = current.unwrap() as z.ZodType;
  }
  return current;
}

/** `delivery_id` → `Delivery id`. */
export function humanizeKey(key: string): string {
  const spaced = key.replaceAll(/[_-]+/g, ' ').trim();
  return spaced.charAt(0).toUpperCase() + spaced.slice(1);
}

/** The label of a field: its registered label, else its key made readable. */
export function fieldLabel(schema: z.ZodType | undefined, key: string): string {
  return (schema && fieldRegistry.get(schema)?.label) ?? humanizeKey(key);
}

/** The currency of a `money()` field (through `.max()` and the like), else undefined. */
export function moneyCurrency(schema: z.ZodType | undefined): string | undefined {
  const meta = schema && fieldRegistry.get(schema);
  return meta?.kind === 'money' ? (meta.currency ?? 'USD') : undefined;
}

/** Currencies whose minor unit people call a cent. */
const CENT_CURRENCIES: readonly string[] = ['USD', 'EUR', 'CAD', 'AUD', 'NZD'];

/** Says in words what a field accepts, for diagnostics: "an integer number of cents". */
export function describeExpected(schema: z.ZodType | undefined): string | undefined {
  if (schema === undefined) return undefined;
  const currency = moneyCurrency(schema);
  if (currency !== undefined) return describeMinorUnits(currency);
  if (schema instanceof z.ZodEnum) {
    return `one of ${schema.options.map((o) => JSON.stringify(o)).join(', ')}`;
  }
  if (schema instanceof z.ZodISODate) return 'a date written YYYY-MM-DD';
  if (schema instanceof z.ZodISODateTime) return 'a date and time written like 2026-04-06T14:30:00Z';
  if (schema instanceof z.ZodEmail) return 'an email address';
  if (schema instanceof z.ZodURL) return 'a URL';
  if (schema instanceof z.ZodNumber) return schema.format === 'safeint' ? 'an integer' : 'a number';
  if (schema instanceof z.ZodString) return 'text';
  if (schema instanceof z.ZodBoolean) return 'true or false';
  if (schema instanceof z.ZodArray) return 'a list';
  if (schema instanceof z.ZodObject) return 'an object';
  return undefined;
}

/** What a money field holds on the wire: "an integer number of cents", "an integer amount of JPY". */
function describeMinorUnits(currency: string): string {
  if (CENT_CURRENCIES.includes(currency)) return 'an integer number of cents';
  const digits = minorDigits(currency);
  return digits === 0
    ? `an integer amount of ${currency}`
    : `an integer number of ${currency} minor units (1/${10 ** digits} ${currency})`;
}

/** The minor unit in the plural, to label a count that cannot be shown as money: "cents", "JPY". */
export function minorUnitsName(currency: string): string {
  if (CENT_CURRENCIES.includes(currency)) return 'cents';
  return minorDigits(currency) === 0 ? currency : `${currency} minor units`;
}
