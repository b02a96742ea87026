/**
 * The run journal (docs/architecture.md §7): an append-only Redis list per run of records
 * `{ seq, prev_hash, plan_digest, event, at, hash }`. `hash` is the SHA-256 of the canonical JSON of
 * the record without `hash`; `prev_hash` is the previous record's `hash`, or 64 zeros for the first.
 * Records are stored as their canonical JSON text (`serializeRecord`).
 *
 * What verification proves: `verifyJournal` detects corruption and reordering inside the stored
 * records — a changed byte, swapped, deleted or inserted records — and, given the head the run hash
 * recorded, a truncated tail. It is NOT proof against someone who controls Redis: they can rewrite
 * the whole chain (and the recorded head) coherently. Redis is trusted infrastructure (docs/architecture.md §13).
 *
 * Pure: journal-reader.ts reads it from Redis.
 */
import { z } from 'zod';
import {
  CanonicalJsonError,
  CountersignError,
  canonicalJson,
  isCanonicalJsonError,
  type JsonObject,
  type JsonValue,
  sha256Hex,
} from '../pipeline/index.ts';
import type { JournalEvent, JournalRecord } from './types.ts';

/** `prev_hash` of the first record of every journal. */
export const GENESIS_HASH = '0'.repeat(64);

/** Where a journal ends: what the next record chains onto. The run hash keeps it as `journal_seq`/`journal_head`. */
export interface JournalHead {
  readonly seq: number;
  readonly hash: string;
}

/** Why a stored journal failed verification. */
export type JournalFault = 'unparseable' | 'bad_hash' | 'broken_chain' | 'bad_seq' | 'head_mismatch';

/** The outcome of {@link verifyJournal}; `index` is 0-based into the stored list. */
export type JournalVerification =
  | { readonly ok: true; readonly count: number; readonly head: string }
  | {
      readonly ok: false;
      readonly index: number;
      /** The seq the faulty record claims, or null when it has none (unparseable, or missing). */
      readonly seq: number | null;
      readonly reason: JournalFault;
      readonly message: string;
    };

/** The outcome of {@link parseRecord}. */
export type ParsedRecord =
  | { readonly ok: true; readonly record: JournalRecord }
  | { readonly ok: false; readonly message: string };

const HEX64 = /^[0-9a-f]{64}$/;
const LAST_MS_OF_9999 = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * The record that appends `event` after `previous` (null for the first record of a run).
 * `at` is ms since the epoch; `planDigest` is the digest of the run's current plan version, or null
 * before v1 exists. Throws for arguments no caller should pass (a bug, not bad input).
 *
 * @example
 * const first = journalRecord(null, { type: 'expired', version: 1 }, Date.now(), plan.digest);
 * const next = journalRecord(first, event, Date.now(), plan.digest); // seq 2, prev_hash = first.hash
 */
export function journalRecord(
  previous: JournalHead | null,
  event: JournalEvent,
  at: number,
  planDigest: string | null,
): JournalRecord {
  return appendRecord(previous, event, at, planDigest).record;
}

/**
 * {@link journalRecord} together with its stored text ({@link serializeRecord}'s result), for
 * writers: the event is written as canonical JSON once, and the hashed and the stored text are both
 * put together around it.
 */
export function appendRecord(
  previous: JournalHead | null,
  event: JournalEvent,
  at: number,
  planDigest: string | null,
): { readonly record: JournalRecord; readonly text: string } {
  if (
    previous !== null &&
    (!Number.isSafeInteger(previous.seq) || previous.seq < 1 || !HEX64.test(previous.hash))
  ) {
    throw new CountersignError(
      'invalid_argument',
      `journalRecord: invalid previous head ${JSON.stringify(previous)}`,
    );
  }
  if (planDigest !== null && !HEX64.test(planDigest)) {
    throw new CountersignError(
      'invalid_argument',
      `journalRecord: invalid plan digest ${JSON.stringify(planDigest)}`,
    );
  }
  // Past year 9999 toISOString writes `+010000-…`, which is not the ISO form parseRecord accepts.
  if (!Number.isSafeInteger(at) || at < 0 || at > LAST_MS_OF_9999) {
    throw new CountersignError('invalid_argument', `journalRecord: invalid time ${at}`);
  }
  const { json, text: eventText } = eventJson(event);
  const unhashed = {
    seq: previous === null ? 1 : previous.seq + 1,
    prev_hash: previous === null ? GENESIS_HASH : previous.hash,
    plan_digest: planDigest,
    at: new Date(at).toISOString(),
  };
  const hash = sha256Hex(recordText(unhashed, eventText));
  return { record: { ...unhashed, event: json, hash }, text: recordText(unhashed, eventText, hash) };
}

/**
 * The event as JSON and its canonical text. An event that is plain JSON already (every writer's) is
 * written as it is; one with undefined members (optional fields set to undefined) is copied member by
 * member first, dropping them, as `JSON.stringify` would; the copy also names precisely what is not
 * JSON in an event that is not.
 */
function eventJson(event: JournalEvent): { json: JournalEvent & JsonObject; text: string } {
  let json: JsonValue = event as unknown as JsonValue;
  let text: string;
  try {
    text = canonicalJson(json);
  } catch {
    // Undefined members, or something that is not JSON at all (a cycle overflows the writer's
    // stack): the copy drops the first and names the second precisely.
    json = toJson(event);
    text = canonicalJson(json);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json) || typeof json.type !== 'string') {
    throw new CountersignError(
      'invalid_argument',
      'journalRecord: an event is an object with a string `type`',
    );
  }
  return { json: json as JournalEvent & JsonObject, text };
}

/** The text stored in the Redis list: canonical JSON of the whole record, `hash` included. */
export function serializeRecord(record: JournalRecord): string {
  return recordText(record, canonicalJson(record.event), record.hash);
}

const recordSchema = z.strictObject({
  seq: z.int().min(1),
  prev_hash: z.string().regex(HEX64, 'must be 64 lower-case hex digits'),
  plan_digest: z.string().regex(HEX64, 'must be 64 lower-case hex digits').nullable(),
  event: z.looseObject({ type: z.string().min(1) }),
  at: z.iso.datetime(),
  hash: z.string().regex(HEX64, 'must be 64 lower-case hex digits'),
});

/**
 * Reads one stored record. Accepts only what {@link serializeRecord} writes: the envelope's shape is
 * checked, and the text must be exactly its own canonical form (so even a change that JSON parsing
 * would hide, such as `\u001f` → `\u001F`, is refused). The hash is not checked here: see
 * {@link verifyJournal}. The event is checked for a string `type` only; its other fields are as the
 * writer typed them, which the hash vouches for once verified.
 */
export function parseRecord(text: string): ParsedRecord {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, message: `not JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
  const shape = recordSchema.safeParse(value);
  if (!shape.success) {
    const issue = shape.error.issues[0];
    const where = issue && issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
    return { ok: false, message: `not a journal record: ${where}${issue?.message ?? 'invalid'}` };
  }
  // The schema checked the envelope; `value` (not zod's copy) is used so nothing is reshaped.
  const record = value as JournalRecord;
  let canonical: string;
  try {
    canonical = serializeRecord(record);
  } catch (error) {
    if (isCanonicalJsonError(error)) return { ok: false, message: `not canonical JSON: ${error.message}` };
    throw error;
  }
  if (canonical !== text) {
    return {
      ok: false,
      message: `not canonical JSON: differs from its canonical form at character ${firstDifference(canonical, text)}`,
    };
  }
  return { ok: true, record };
}

/**
 * Recomputes a stored journal: each record must parse, hash to its `hash`, have `seq` = index + 1 and
 * link to the previous record's hash (64 zeros for the first). Reports the first faulty record.
 * With `head` (the run hash's `journal_seq`/`journal_head`), also checks the list ends there, which
 * catches a truncated tail; without it, removing the last records is undetectable.
 *
 * Detects corruption and reordering inside the stored records; it does not prove the journal is
 * authentic against someone who controls Redis (they can rewrite a coherent chain).
 *
 * @example
 * const result = verifyJournal(await readJournal(redis, keys, runId));
 * if (!result.ok) console.log(`record #${result.index + 1}: ${result.reason}`);
 */
export function verifyJournal(records: readonly string[], head?: JournalHead): JournalVerification {
  let previousHash = GENESIS_HASH;
  for (const [index, text] of records.entries()) {
    const parsed = parseRecord(text);
    if (!parsed.ok) return { ok: false, index, seq: null, reason: 'unparseable', message: parsed.message };
    const { record } = parsed;
    const expected = recordHash(record);
    if (record.hash !== expected) {
      return {
        ok: false,
        index,
        seq: record.seq,
        reason: 'bad_hash',
        message: `stored hash ${record.hash} but the record hashes to ${expected}`,
      };
    }
    // Before the link check: a swapped, dropped or duplicated record shows first as a seq out of place.
    if (record.seq !== index + 1) {
      return {
        ok: false,
        index,
        seq: record.seq,
        reason: 'bad_seq',
        message: `record at position ${index + 1} has seq ${record.seq}`,
      };
    }
    if (record.prev_hash !== previousHash) {
      return {
        ok: false,
        index,
        seq: record.seq,
        reason: 'broken_chain',
        message: `prev_hash ${record.prev_hash} does not match the previous record's hash ${previousHash}`,
      };
    }
    previousHash = record.hash;
  }
  if (head !== undefined && (head.seq !== records.length || head.hash !== previousHash)) {
    return { ok: false, reason: 'head_mismatch', ...headMismatch(head, records.length, previousHash) };
  }
  return { ok: true, count: records.length, head: previousHash };
}

/** Where the list and the head the run recorded part ways: the first record one has and the other lacks. */
function headMismatch(
  head: JournalHead,
  count: number,
  listHead: string,
): { index: number; seq: number; message: string } {
  if (head.seq > count) {
    return {
      index: count,
      seq: count + 1,
      message: `the run records ${head.seq} journal records but the list holds ${count}: records #${count + 1}..#${head.seq} are missing`,
    };
  }
  if (head.seq < count) {
    return {
      index: head.seq,
      seq: head.seq + 1,
      message: `the run records ${head.seq} journal records but the list holds ${count}: record #${head.seq + 1} was never committed by the service`,
    };
  }
  return {
    index: count - 1,
    seq: count,
    message: `the run records head ${head.hash} but the list ends in ${listHead}`,
  };
}

/**
 * The head of a stored journal (what the next record chains onto), or null when it is empty. Throws
 * when the last record is unreadable: chaining onto it would hide the damage.
 */
export function journalHead(records: readonly string[]): JournalHead | null {
  const last = records.at(-1);
  if (last === undefined) return null;
  const parsed = parseRecord(last);
  if (!parsed.ok)
    throw new CountersignError(
      'state_corrupt',
      `journalHead: the last journal record is unreadable (${parsed.message})`,
    );
  return { seq: parsed.record.seq, hash: parsed.record.hash };
}

/**
 * A JSON copy of `value` for hashing: object members that are `undefined` are dropped (optional
 * fields are written by leaving them out, and `canonicalJson` rightly refuses `undefined`); anything
 * else that is not JSON — functions, class instances, holes or `undefined` in arrays, cycles — throws
 * `CanonicalJsonError`. Numbers are left for `canonicalJson` to check.
 */
export function toJson(value: unknown): JsonValue {
  return copyJson(value, [], new Set());
}

function copyJson(value: unknown, path: (string | number)[], ancestors: Set<object>): JsonValue {
  switch (typeof value) {
    case 'string':
    case 'number':
    case 'boolean':
      return value;
    case 'object':
      break;
    default:
      throw new CanonicalJsonError('not_json', path, `${typeof value} is not a JSON value`);
  }
  if (value === null) return null;
  if (ancestors.has(value)) throw new CanonicalJsonError('not_json', path, 'a cycle is not a JSON value');
  ancestors.add(value);
  try {
    if (Array.isArray(value)) {
      if (Object.getPrototypeOf(value) !== Array.prototype) {
        throw new CanonicalJsonError('not_json', path, 'an array subclass is not a JSON value');
      }
      // Index loop, not map: map skips holes, which must be refused like undefined.
      const copy: JsonValue[] = [];
      for (let index = 0; index < value.length; index++) {
        const element: unknown = value[index];
        if (element === undefined) {
          throw new CanonicalJsonError(
            'not_json',
            [...path, index],
            'undefined in an array is not a JSON value',
          );
        }
        copy.push(copyJson(element, [...path, index], ancestors));
      }
      return copy;
    }
    const proto: unknown = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) {
      throw new CanonicalJsonError('not_json', path, 'a non-plain object is not a JSON value');
    }
    const copy: JsonObject = {};
    for (const [key, member] of Object.entries(value)) {
      if (member === undefined) continue;
      // defineProperty, not assignment: an own `__proto__` key (plans are untrusted) must stay data.
      Object.defineProperty(copy, key, {
        value: copyJson(member, [...path, key], ancestors),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return copy;
  } finally {
    ancestors.delete(value);
  }
}

/** SHA-256 of the canonical record without `hash`. */
function recordHash(record: Omit<JournalRecord, 'hash'>): string {
  return sha256Hex(recordText(record, canonicalJson(record.event)));
}

/**
 * The canonical JSON of a record around its event's canonical text, with `hash` when given: the one
 * place a record's text is put together (written, hashed, and checked when read). Members in sorted
 * order: `at, event, [hash,] plan_digest, prev_hash, seq`.
 */
function recordText(
  record: Pick<JournalRecord, 'at' | 'plan_digest' | 'prev_hash' | 'seq'>,
  eventText: string,
  hash?: string,
): string {
  const hashMember = hash === undefined ? '' : `"hash":${canonicalJson(hash)},`;
  return `{"at":${canonicalJson(record.at)},"event":${eventText},${hashMember}"plan_digest":${canonicalJson(record.plan_digest)},"prev_hash":${canonicalJson(record.prev_hash)},"seq":${canonicalJson(record.seq)}}`;
}

function firstDifference(a: string, b: string): number {
  let index = 0;
  while (index < a.length && index < b.length && a[index] === b[index]) index++;
  return index;
}
