import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import {
  appendRecord,
  GENESIS_HASH,
  journalHead,
  journalRecord,
  parseRecord,
  serializeRecord,
  toJson,
  verifyJournal,
} from '../../src/approvals/journal.ts';
import { readJournal, readJournalWithHead } from '../../src/approvals/journal-reader.ts';
import { createKeys } from '../../src/approvals/keys.ts';
import type { JournalEvent, JournalRecord } from '../../src/approvals/types.ts';
import { isCanonicalJsonError } from '../../src/pipeline/index.ts';
import { testRedis } from '../helpers/redis.ts';
import { freightHistory } from '../support/journal-history.ts';

const history = freightHistory();
const AT = Date.parse('2026-04-01T10:02:11Z');
const DIGEST = 'ab'.repeat(32);

/** Flips bits of one UTF-8 byte of a stored text, as a bad disk or a bad copy would. */
function flipByte(text: string, position: number, mask: number): string {
  const bytes = Buffer.from(text, 'utf8');
  const index = position % bytes.length;
  bytes[index] = bytes[index]! ^ mask;
  return bytes.toString('utf8');
}

function broken(texts: readonly string[], head?: { seq: number; hash: string }) {
  const result = verifyJournal(texts, head);
  if (result.ok) throw new Error('expected the journal to fail verification');
  return result;
}

describe('journalRecord', () => {
  it('hashes the canonical record without `hash` (value computed independently with python3)', () => {
    // python3: json.dumps(record, sort_keys=True, separators=(",", ":")) → sha256 hex
    const record = journalRecord(
      { seq: 3, hash: 'cd'.repeat(32) },
      { type: 'outcome', stepId: 's2', status: 'applied' },
      AT,
      DIGEST,
    );
    expect(record).toEqual({
      seq: 4,
      prev_hash: 'cd'.repeat(32),
      plan_digest: DIGEST,
      event: { type: 'outcome', stepId: 's2', status: 'applied' },
      at: '2026-04-01T10:02:11.000Z',
      hash: 'dc83109d1e74009b7cf86583e90f404339e137ce56aaac3069e5e8c8a764772a',
    });
    expect(serializeRecord(record)).toBe(
      `{"at":"2026-04-01T10:02:11.000Z","event":{"status":"applied","stepId":"s2","type":"outcome"},` +
        `"hash":"${record.hash}","plan_digest":"${DIGEST}","prev_hash":"${'cd'.repeat(32)}","seq":4}`,
    );
  });

  it('starts a journal at seq 1, chained from 64 zeros, and chains each record to the one before', () => {
    const first = journalRecord(null, { type: 'expired', version: 1 }, AT, null);
    const second = journalRecord(first, { type: 'decision_delivered', status: 'expired' }, AT + 1, null);
    expect(first).toMatchObject({ seq: 1, prev_hash: GENESIS_HASH, plan_digest: null });
    expect(GENESIS_HASH).toBe('0'.repeat(64));
    expect(second).toMatchObject({ seq: 2, prev_hash: first.hash, at: '2026-04-01T10:02:11.001Z' });
  });

  it('leaves out optional fields a caller passed as undefined, hashing as if they were omitted', () => {
    const omitted = journalRecord(null, { type: 'outcome', stepId: 's2', status: 'failed' }, AT, DIGEST);
    // What `{ ...event, detail: input.detail }` yields when the types are bypassed (JSON, a cast).
    const sloppy = {
      type: 'outcome',
      stepId: 's2',
      status: 'failed',
      detail: undefined,
    } as unknown as JournalEvent;
    const withUndefined = journalRecord(null, sloppy, AT, DIGEST);
    expect(withUndefined.hash).toBe(omitted.hash);
    expect(Object.keys(withUndefined.event)).not.toContain('detail');
  });

  it('refuses events that are not JSON, naming where', () => {
    const event = (extra: object) => Object.assign({ type: 'expired', version: 1 } as const, extra);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    for (const [extra, path] of [
      [{ when: new Date(AT) }, ['when']],
      [{ hook: () => 1 }, ['hook']],
      [{ list: [1, undefined] }, ['list', 1]],
      // biome-ignore lint/suspicious/noSparseArray: a hole is what is being refused.
      [{ list: [1, , 3] }, ['list', 1]],
      [{ nested: cyclic }, ['nested', 'self']],
      [{ ratio: 0.5 }, ['ratio']],
    ] as const) {
      let caught: unknown;
      try {
        journalRecord(null, event(extra), AT, null);
      } catch (error) {
        caught = error;
      }
      expect(isCanonicalJsonError(caught)).toBe(true);
      if (isCanonicalJsonError(caught)) expect(caught.path).toEqual(path);
    }
  });

  it('keeps an own `__proto__` key of an untrusted plan as data', () => {
    const args = JSON.parse('{"__proto__":{"polluted":true},"ticket":"1"}');
    const copy = toJson({ args });
    expect(JSON.stringify(copy)).toBe('{"args":{"__proto__":{"polluted":true},"ticket":"1"}}');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('appendRecord writes the stored text in one pass: exactly serializeRecord of its record', () => {
    const jsonValue = fc.letrec<{ value: unknown }>((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        fc.string({ unit: 'binary' }),
        fc.integer(),
        fc.boolean(),
        fc.constant(null),
        fc.array(tie('value'), { maxLength: 3 }),
        fc.dictionary(fc.string({ unit: 'binary' }), tie('value'), { maxKeys: 3 }),
      ),
    })).value;
    fc.assert(
      fc.property(
        fc.dictionary(fc.string({ unit: 'binary' }), jsonValue, { maxKeys: 4 }),
        fc.option(fc.stringMatching(/^[0-9a-f]{64}$/), { nil: null }),
        fc.integer({ min: 0, max: Date.UTC(9999, 11, 31) }),
        (extra, planDigest, at) => {
          const event = { ...extra, type: 'outcome' } as unknown as JournalEvent;
          const first = appendRecord(null, event, at, planDigest);
          const second = appendRecord(first.record, event, at + 1, planDigest);
          expect(first.text).toBe(serializeRecord(first.record));
          expect(second.text).toBe(serializeRecord(second.record));
          expect(verifyJournal([first.text, second.text], second.record)).toMatchObject({ ok: true });
        },
      ),
    );
  });

  it('refuses a malformed previous head, plan digest or time (caller bugs)', () => {
    const event: JournalEvent = { type: 'expired', version: 1 };
    expect(() => journalRecord({ seq: 0, hash: DIGEST }, event, AT, null)).toThrow(/previous head/);
    expect(() => journalRecord({ seq: 1, hash: 'xyz' }, event, AT, null)).toThrow(/previous head/);
    expect(() => journalRecord(null, event, AT, 'ABC')).toThrow(/plan digest/);
    expect(() => journalRecord(null, event, Number.NaN, null)).toThrow(/time/);
    expect(() => journalRecord(null, event, Date.UTC(10_000, 0, 1), null)).toThrow(/time/);
  });
});

describe('parseRecord', () => {
  const text = history.texts[4]!;

  it('reads back what serializeRecord wrote', () => {
    const parsed = parseRecord(text);
    expect(parsed).toEqual({ ok: true, record: history.records[4] });
  });

  it('refuses text that is not exactly the canonical form', () => {
    const record = JSON.parse(text) as JournalRecord;
    const cases = [
      JSON.stringify(record, null, 1),
      JSON.stringify(Object.fromEntries(Object.entries(record).reverse())), // key order
      text.replace('{"at"', '{"at":"x","at"'), // duplicate key
    ];
    for (const variant of cases) expect(parseRecord(variant)).toMatchObject({ ok: false });
    // A change JSON.parse would hide: an upper-case hex escape decodes to the same string.
    const escaped = serializeRecord(
      journalRecord(null, { type: 'submission_refused', reason: 'a\u001fb' }, AT, null),
    );
    expect(escaped).toContain('\\u001f');
    expect(parseRecord(escaped).ok).toBe(true);
    expect(parseRecord(escaped.replace('\\u001f', '\\u001F'))).toMatchObject({
      ok: false,
      message: expect.stringMatching(/^not canonical JSON/),
    });
  });

  it('names what is wrong with a record of the wrong shape', () => {
    expect(parseRecord('{"seq":1')).toMatchObject({ ok: false, message: expect.stringMatching(/^not JSON/) });
    const { hash: _, ...noHash } = history.records[0]!;
    expect(parseRecord(JSON.stringify(noHash))).toMatchObject({
      ok: false,
      message: expect.stringContaining('hash'),
    });
    expect(parseRecord(JSON.stringify({ ...history.records[0]!, extra: 1 }))).toMatchObject({ ok: false });
  });
});

describe('verifyJournal', () => {
  const { texts, records } = history;
  const last = records.at(-1)!;
  const head = { seq: last.seq, hash: last.hash };

  it('verifies a real history, reporting the count and head', () => {
    expect(verifyJournal(texts)).toEqual({ ok: true, count: 13, head: last.hash });
    expect(verifyJournal(texts, head)).toEqual({ ok: true, count: 13, head: last.hash });
    expect(verifyJournal([])).toEqual({ ok: true, count: 0, head: GENESIS_HASH });
  });

  it('detects one flipped byte anywhere in any stored record, at that record', () => {
    fc.assert(
      fc.property(
        fc.nat({ max: texts.length - 1 }),
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        (index, position, mask) => {
          const corrupted = [...texts];
          corrupted[index] = flipByte(texts[index]!, position, mask);
          const result = verifyJournal(corrupted, head);
          expect(result).toMatchObject({ ok: false, index });
          if (!result.ok)
            expect(['unparseable', 'bad_hash', 'bad_seq', 'broken_chain']).toContain(result.reason);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('reports a changed field as bad_hash with the seq the record claims', () => {
    const corrupted = [...texts];
    corrupted[7] = texts[7]!.replace('"U0OP1"', '"U0OP2"');
    expect(broken(corrupted)).toMatchObject({ index: 7, seq: 8, reason: 'bad_hash' });
  });

  it('detects any two records swapped', () => {
    fc.assert(
      fc.property(fc.nat({ max: texts.length - 1 }), fc.nat({ max: texts.length - 1 }), (i, j) => {
        fc.pre(i !== j);
        const swapped = [...texts];
        [swapped[i], swapped[j]] = [texts[j]!, texts[i]!];
        expect(broken(swapped)).toMatchObject({ index: Math.min(i, j), reason: 'bad_seq' });
      }),
    );
  });

  it('detects a deleted record; the last one only against the head the run recorded', () => {
    for (let index = 0; index < texts.length - 1; index++) {
      const deleted = texts.filter((_, i) => i !== index);
      expect(broken(deleted)).toMatchObject({ index, seq: index + 2, reason: 'bad_seq' });
    }
    const truncated = texts.slice(0, -1);
    expect(verifyJournal(truncated).ok).toBe(true); // nothing in the list itself says it is short
    expect(broken(truncated, head)).toMatchObject({ index: 12, seq: 13, reason: 'head_mismatch' });
  });

  it('detects an inserted record, even one chained coherently onto its predecessor', () => {
    fc.assert(
      fc.property(fc.nat({ max: texts.length }), fc.nat({ max: texts.length - 1 }), (at, copied) => {
        const duplicated = [...texts.slice(0, at), texts[copied]!, ...texts.slice(at)];
        expect(verifyJournal(duplicated, head).ok).toBe(false);
      }),
    );
    const forged = journalRecord(
      records[5]!,
      { type: 'approval', userId: 'U0X', version: 2, stepDigests: [] },
      AT,
      null,
    );
    const inserted = [...texts.slice(0, 6), serializeRecord(forged), ...texts.slice(6)];
    expect(broken(inserted)).toMatchObject({ index: 7, seq: 7, reason: 'bad_seq' });
    const appended = [
      ...texts,
      serializeRecord(journalRecord(last, { type: 'expired', version: 2 }, AT, null)),
    ];
    expect(broken(appended, head)).toMatchObject({ index: 13, seq: 14, reason: 'head_mismatch' });
  });

  it('reports a record taken from another run at the same place as a broken chain', () => {
    const other = freightHistory('run-freight-2');
    const mixed = [...texts];
    mixed[3] = other.texts[3]!;
    expect(broken(mixed)).toMatchObject({ index: 3, seq: 4, reason: 'broken_chain' });
  });

  it('reports a head the run recorded that the list does not end in', () => {
    expect(broken(texts, { seq: 13, hash: DIGEST })).toMatchObject({
      index: 12,
      seq: 13,
      reason: 'head_mismatch',
    });
  });

  it('is not proof against whoever controls Redis: a coherent rewrite of the chain verifies', () => {
    // Change who approved and re-chain every record after it, as someone with write access could.
    const rewritten: JournalRecord[] = [];
    for (const record of records) {
      const event = record.event.type === 'approved' ? { ...record.event, by: 'U0MALLORY' } : record.event;
      rewritten.push(
        journalRecord(rewritten.at(-1) ?? null, event, Date.parse(record.at), record.plan_digest),
      );
    }
    const forged = rewritten.map(serializeRecord);
    const forgedHead = { seq: 13, hash: rewritten.at(-1)!.hash };
    expect(verifyJournal(forged, forgedHead)).toMatchObject({ ok: true, count: 13 });
  });
});

describe('journalHead', () => {
  it('is what the next record chains onto, or null for an empty journal', () => {
    expect(journalHead([])).toBeNull();
    const last = history.records.at(-1)!;
    expect(journalHead(history.texts)).toEqual({ seq: 13, hash: last.hash });
  });

  it('throws instead of chaining onto an unreadable last record', () => {
    expect(() => journalHead([...history.texts.slice(0, 2), '{oops'])).toThrow(/unreadable/);
  });
});

describe('readJournal and readJournalWithHead (real Redis)', () => {
  const { redis, prefix, cleanup } = testRedis('journal');
  const keys = createKeys(prefix);
  afterAll(cleanup);

  it('reads the stored records oldest first and the head the run hash recorded', async () => {
    const runKeys = keys.forRun('run-read-1');
    await redis.rpush(runKeys.journal, ...history.texts);
    const last = history.records.at(-1)!;
    await redis.hset(runKeys.run, { journal_seq: '13', journal_head: last.hash });
    expect(await readJournal(redis, keys, 'run-read-1')).toEqual(history.texts);
    expect(await readJournalWithHead(redis, keys, 'run-read-1')).toEqual({
      records: history.texts,
      head: { seq: 13, hash: last.hash },
    });
  });

  it('gives no records and no head for an unknown run, or a run that has not journaled yet', async () => {
    expect(await readJournal(redis, keys, 'run-unknown')).toEqual([]);
    expect(await readJournalWithHead(redis, keys, 'run-unknown')).toEqual({ records: [], head: null });
    await redis.hset(keys.forRun('run-new').run, { journal_seq: '0', journal_head: '' });
    expect(await readJournalWithHead(redis, keys, 'run-new')).toEqual({ records: [], head: null });
  });
});
