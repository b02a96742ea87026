import { z } from 'zod';
import {
  type ArgPath,
  canonicalJson,
  type FieldMeta,
  fieldRegistry,
  formatMoney,
  humanizeKey,
  isJsonObject,
  type JsonObject,
  type JsonValue,
  valueAt,
} from '../src/pipeline/index.ts';
import { clipMrkdwn, escapeMrkdwn, quoteLines } from './mrkdwn.ts';
import { formatDay, formatInstant } from './time.ts';

/**
 * What a tool argument is, for people: the kind decides how a value reads on a card and which input
 * element edits it (docs/architecture.md §9). `other` covers shapes no single input can edit (unions, records,
 * lists without items): they are shown and kept as they are.
 */
export type FieldKind =
  | 'text'
  | 'long_text'
  | 'int'
  | 'money'
  | 'enum'
  | 'date'
  | 'datetime'
  | 'boolean'
  | 'email'
  | 'url'
  | 'other';

/** One leaf argument of a step, found by walking the tool's zod schema. */
export interface ArgField {
  /** Location inside the step's args (object keys, array indexes). */
  readonly path: ArgPath;
  /** "Amount", or "Address › City" for nested fields. */
  readonly label: string;
  readonly kind: FieldKind;
  /** The key may be left out. */
  readonly optional: boolean;
  /** `null` is a valid value. */
  readonly nullable: boolean;
  /** ISO 4217, for `money`. */
  readonly currency?: string;
  /** Smallest and largest accepted amounts in minor units, for `money`, when the schema bounds them. */
  readonly min?: number;
  readonly max?: number;
  /** Allowed values, for `enum`. */
  readonly options?: readonly string[];
  /** Longest accepted string, when the schema says. */
  readonly maxLength?: number;
}

/**
 * The leaf fields of a tool's arguments, in schema order. Objects are walked into; lists are walked
 * item by item when `args` holds them (a list's length is not editable), else the list is one `other`.
 */
export function argFields(schema: z.ZodType, args?: JsonObject): ArgField[] {
  return walk(schema, args, [], [], { optional: false, nullable: false });
}

function walk(
  schema: z.ZodType,
  value: JsonValue | undefined,
  path: (string | number)[],
  labels: string[],
  wrapped: { optional: boolean; nullable: boolean },
): ArgField[] {
  const { inner, optional, nullable } = unwrap(schema, wrapped);
  if (inner instanceof z.ZodObject) {
    const object = isJsonObject(value) ? value : undefined;
    return Object.entries(inner.shape as Record<string, z.ZodType>).flatMap(([key, child]) =>
      walk(child, object?.[key], [...path, key], [...labels, labelOf(child, key)], {
        optional: false,
        nullable: false,
      }),
    );
  }
  if (inner instanceof z.ZodArray && Array.isArray(value) && value.length > 0) {
    const parent = labels.at(-1) ?? '';
    return value.flatMap((item, index) =>
      walk(
        inner.element as z.ZodType,
        item,
        [...path, index],
        [...labels.slice(0, -1), `${parent} ${index + 1}`],
        {
          optional: false,
          nullable: false,
        },
      ),
    );
  }
  return [{ path, label: labels.join(' › '), optional, nullable, ...describeKind(inner, metaOf(schema)) }];
}

/** Field metadata registered on the schema as written or on what it wraps (`money().optional()`). */
function metaOf(schema: z.ZodType): FieldMeta | undefined {
  return fieldRegistry.get(schema) ?? fieldRegistry.get(unwrap(schema).inner);
}

function labelOf(schema: z.ZodType, key: string): string {
  return metaOf(schema)?.label ?? humanizeKey(key);
}

function unwrap(
  schema: z.ZodType,
  wrapped = { optional: false, nullable: false },
): { inner: z.ZodType; optional: boolean; nullable: boolean } {
  let inner = schema;
  let { optional, nullable } = wrapped;
  for (;;) {
    if (inner instanceof z.ZodOptional || inner instanceof z.ZodDefault) optional = true;
    else if (inner instanceof z.ZodNullable) nullable = true;
    else return { inner, optional, nullable };
    inner = inner.unwrap() as z.ZodType;
  }
}

function describeKind(
  schema: z.ZodType,
  meta: FieldMeta | undefined,
): Pick<ArgField, 'kind' | 'currency' | 'min' | 'max' | 'options' | 'maxLength'> {
  const maxLength = stringMax(schema);
  const withMax = maxLength === undefined ? {} : { maxLength };
  if (meta?.kind === 'money')
    return { kind: 'money', currency: meta.currency ?? 'USD', ...moneyBounds(schema) };
  if (meta?.kind === 'long_text') return { kind: 'long_text', ...withMax };
  if (schema instanceof z.ZodISODate) return { kind: 'date' };
  if (schema instanceof z.ZodISODateTime) return { kind: 'datetime' };
  if (schema instanceof z.ZodEmail) return { kind: 'email', ...withMax };
  if (schema instanceof z.ZodURL) return { kind: 'url', ...withMax };
  if (schema instanceof z.ZodEnum) {
    const options = schema.options;
    return options.every((option) => typeof option === 'string')
      ? { kind: 'enum', options: options as string[] }
      : { kind: 'other' };
  }
  if (schema instanceof z.ZodBoolean) return { kind: 'boolean' };
  // Plans carry integers only (canonical JSON has no floats), so every number is edited as one.
  if (schema instanceof z.ZodNumber) return { kind: 'int' };
  if (schema instanceof z.ZodString || schema instanceof z.ZodStringFormat)
    return { kind: 'text', ...withMax };
  return { kind: 'other' };
}

/**
 * A money schema's bounds, read from the schema rather than recorded by `money()`: a later `.max()`
 * keeps the metadata but not the bound. The safe-integer range every `z.int()` has is no bound. An
 * exclusive bound (`.positive()`) reads as inclusive: the modal lets it through and validation refuses it.
 */
function moneyBounds(schema: z.ZodType): Pick<ArgField, 'min' | 'max'> {
  if (!(schema instanceof z.ZodNumber)) return {};
  const { minValue, maxValue } = schema;
  return {
    ...(minValue !== null && Number.isSafeInteger(minValue) && minValue > Number.MIN_SAFE_INTEGER
      ? { min: minValue }
      : {}),
    ...(maxValue !== null && Number.isSafeInteger(maxValue) && maxValue < Number.MAX_SAFE_INTEGER
      ? { max: maxValue }
      : {}),
  };
}

function stringMax(schema: z.ZodType): number | undefined {
  const max = schema instanceof z.ZodString ? schema.maxLength : null;
  return typeof max === 'number' && Number.isFinite(max) ? max : undefined;
}

/** Longest a single value may take on a card line before it is cut. */
const INLINE_MAX = 300;
/** Longest long text (a reply, a note) shown on a card. */
const LONG_TEXT_MAX = 700;

/**
 * A value as mrkdwn for one line: money as "$1,489.00", dates as "Fri 3 Apr 2026", text escaped and
 * cut with a note, line breaks shown as ↵ so a value can never start a line of its own.
 */
export function formatArgValue(
  field: Pick<ArgField, 'kind' | 'currency'> | undefined,
  value: JsonValue | undefined,
  options: { readonly tz?: string; readonly max?: number } = {},
): string {
  const max = options.max ?? INLINE_MAX;
  if (value === undefined) return '_(not set)_';
  if (value === null) return '_(empty)_';
  switch (field?.kind) {
    case 'money':
      if (Number.isSafeInteger(value)) return formatMoney(value as number, field.currency ?? 'USD');
      break;
    case 'date':
      if (typeof value === 'string') return clipMrkdwn(formatDay(value), max);
      break;
    case 'datetime':
      if (typeof value === 'string' && !Number.isNaN(Date.parse(value))) {
        return formatInstant(Date.parse(value), options.tz === undefined ? {} : { tz: options.tz });
      }
      break;
    case 'boolean':
      if (typeof value === 'boolean') return value ? 'yes' : 'no';
      break;
    default:
      break;
  }
  if (typeof value === 'string') return clipMrkdwn(oneLine(value), max);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return clipMrkdwn(canonicalJson(value), max);
}

/** Line breaks (and the space around them) as " ↵ ". */
function oneLine(text: string): string {
  return text.replaceAll(/\s*(?:\r\n|\r|\n)\s*/g, ' ↵ ');
}

/**
 * A step's arguments as mrkdwn lines ("Amount: $1,489.00"), labelled from field metadata; long text is
 * quoted on its own lines below its label.
 */
export function formatArgLines(
  schema: z.ZodType | undefined,
  args: JsonObject,
  options: { readonly tz?: string } = {},
): string[] {
  if (schema === undefined) {
    // The tool is gone from the config: show the raw arguments rather than nothing.
    return Object.entries(args).map(
      ([key, value]) => `${escapeMrkdwn(key)}: ${formatArgValue(undefined, value, options)}`,
    );
  }
  return argFields(schema, args).flatMap((field) => {
    const value = valueAt(args, field.path);
    if (value === undefined && field.optional) return [];
    const label = escapeMrkdwn(field.label);
    if (field.kind === 'long_text' && typeof value === 'string') {
      return [`${label}:\n${quoteLines(clipMrkdwn(value, LONG_TEXT_MAX))}`];
    }
    return [`${label}: ${formatArgValue(field, value, options)}`];
  });
}
