/**
 * Decoding Web API arguments. @slack/web-api sends form bodies in which every value is a string:
 * objects and arrays (`blocks`, `view`, `metadata`) as JSON, booleans as "true"/"false", numbers as
 * digits. JSON bodies carry real types. These helpers accept both.
 */
import { z } from 'zod';
import { checkMessageBlocks } from '../block-kit-limits.ts';
import type { Block, MessageMetadata } from '../slack-objects.ts';
import { type ApiArgs, fail, type SlackResponse } from './method.ts';

/** Arguments Slack takes as JSON strings in form bodies. */
const JSON_ARGS = new Set(['blocks', 'attachments', 'view', 'metadata']);

/** Drop the token and decode JSON-string arguments (left as they are when they are not valid JSON). */
export function decodeArgs(raw: { readonly [key: string]: unknown }): ApiArgs {
  const args: { [key: string]: unknown } = {};
  for (const [key, value] of Object.entries(raw)) {
    if (key === 'token') continue;
    args[key] = JSON_ARGS.has(key) && typeof value === 'string' ? parseJsonOr(value) : value;
  }
  return args;
}

function parseJsonOr(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** A boolean sent as `true`, `"true"`, `"1"`, `false`, `"false"`, `"0"`. */
export const formBool = z.preprocess((value) => {
  if (value === 'true' || value === '1' || value === 1) return true;
  if (value === 'false' || value === '0' || value === 0 || value === '') return false;
  return value;
}, z.boolean());

/** An integer sent as a number or as digits. */
export const formInt = z.preprocess(
  (value) => (typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value),
  z.number().int(),
);

/** A message ts: a string, or a number (which loses precision, as Slack warns). */
export const formTs = z.preprocess(
  (value) => (typeof value === 'number' ? String(value) : value),
  z.string(),
);

/** Parse arguments with `schema`; a failure is Slack's `invalid_arguments` with one line per problem. */
export function parseArgs<S extends z.ZodType>(
  schema: S,
  args: ApiArgs,
):
  | { readonly ok: true; readonly value: z.output<S> }
  | { readonly ok: false; readonly response: SlackResponse } {
  const result = schema.safeParse(args);
  if (result.success) return { ok: true, value: result.data };
  const details = result.error.issues.map(
    (issue) => `${issue.message} [json-pointer:/${issue.path.join('/')}]`,
  );
  return { ok: false, response: fail('invalid_arguments', details) };
}

/** `blocks` of a message: absent, or an array within Block Kit limits. */
export function parseMessageBlocks(
  value: unknown,
):
  | { readonly ok: true; readonly blocks: readonly Block[] | undefined }
  | { readonly ok: false; readonly response: SlackResponse } {
  if (value === undefined) return { ok: true, blocks: undefined };
  if (!Array.isArray(value))
    return { ok: false, response: fail('invalid_blocks_format', ['blocks must be a JSON array']) };
  const violations = checkMessageBlocks(value);
  if (violations.length > 0) {
    const messages = violations.map((violation) => violation.message);
    return { ok: false, response: fail('invalid_blocks', messages, { errors: messages }) };
  }
  // checkMessageBlocks has established every entry is an object.
  return { ok: true, blocks: value.filter(isBlock) };
}

function isBlock(value: unknown): value is Block {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const MetadataSchema = z.object({
  event_type: z.string().min(1).max(255),
  event_payload: z.record(z.string(), z.unknown()),
});

/** `metadata` of a message: absent, or `{ event_type, event_payload }`. */
export function parseMetadata(
  value: unknown,
):
  | { readonly ok: true; readonly metadata: MessageMetadata | undefined }
  | { readonly ok: false; readonly response: SlackResponse } {
  if (value === undefined) return { ok: true, metadata: undefined };
  const result = MetadataSchema.safeParse(value);
  if (result.success) return { ok: true, metadata: result.data };
  return {
    ok: false,
    response: fail('invalid_metadata_format', [
      'metadata must be an object with event_type and event_payload',
    ]),
  };
}
