import { createHmac, createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/pipeline/canonical-json.ts';
import type { JsonObject } from '../../src/pipeline/json.ts';
import {
  createReceiptSigner,
  jwksOf,
  keysFromJwks,
  publicJwk,
  type Receipt,
  type ReceiptKeys,
  receiptKeysOf,
  receiptKid,
  signReceipt,
  verifyReceiptWith,
} from '../../src/pipeline/receipt.ts';
import { parseStrictJson } from '../../src/pipeline/strict-json.ts';
import {
  allPaths,
  jsonString,
  reorderKeys,
  replaceAt,
  safeJsonObject,
  safeJsonValue,
} from './json-arbitraries.ts';

interface VectorKey {
  privateKeyPem: string;
  publicKeyPem: string;
  jwk: JsonObject;
}

interface ValidVector {
  name: string;
  jwks: unknown;
  decision: JsonObject;
  canonical: string;
  receipt: Receipt;
}

interface InvalidVector {
  name: string;
  jwks: unknown;
  decision: JsonObject;
  receipt: unknown;
  reason: string;
}

const vectorsText = readFileSync(new URL('../vectors/receipts.json', import.meta.url), 'utf8');
const vectors = JSON.parse(vectorsText) as {
  _about: string[];
  keys: { current: VectorKey; previous: VectorKey };
  valid: ValidVector[];
  invalid: InvalidVector[];
};

const vectorKeys = Object.values(vectors.keys).map((key) => createPrivateKey(key.privateKeyPem));

/** The JWKS of a vector, read the way an agent reads one. */
function keysOf(jwks: unknown): ReceiptKeys {
  const read = keysFromJwks(jwks);
  if (!read.ok) throw new Error(read.message);
  return read.keys;
}

const keyA = generateKeyPairSync('ed25519');
const keyB = generateKeyPairSync('ed25519');
const signerA = createReceiptSigner(keyA.privateKey);
const signerB = createReceiptSigner(keyB.privateKey);
const keysA = receiptKeysOf([keyA.publicKey]);
const keysAB = receiptKeysOf([keyA.publicKey, keyB.publicKey]);

/** Objects that can be signed: a `receipt` field is never part of what is signed. */
const unsignedObject = safeJsonObject.filter((value) => !Object.hasOwn(value, 'receipt'));

describe('published receipt vectors', () => {
  it('have no duplicate keys, and no number that is not a safe integer but the not_canonical case', () => {
    const strict = parseStrictJson(vectorsText, { maxDepth: 64, maxStringLength: 10_000 });
    const notCanonical = vectors.invalid.findIndex((vector) => vector.reason === 'not_canonical');
    expect(strict).toMatchObject({
      ok: false,
      problems: [{ code: 'non_integer_number', path: ['invalid', notCanonical, 'decision', 'version'] }],
    });
  });

  it('cover approved, rejected and invalid decisions, a release, preconditions, rotation, and every failure reason', () => {
    const releases = vectors.valid.filter((vector) => vector.decision.kind === 'release');
    expect(releases).toHaveLength(1);
    expect(
      new Set(
        vectors.valid.filter((vector) => !releases.includes(vector)).map((vector) => vector.decision.status),
      ),
    ).toEqual(new Set(['approved', 'rejected', 'invalid', 'expired']));
    expect(vectors.valid.some((vector) => vector.receipt.kid === vectors.keys.previous.jwk.kid)).toBe(true);
    expect(vectors.valid.some((vector) => /[^ -~]/.test(vector.canonical))).toBe(true);
    // Issue 19: a decision whose steps carry preconditions, and steps without them leave the field out.
    expect(vectors.valid.filter((vector) => vector.canonical.includes('"preconditions":'))).toHaveLength(1);
    expect(vectors.valid.some((vector) => vector.canonical.includes('"preconditions":[]'))).toBe(false);
    expect(new Set(vectors.invalid.map((vector) => vector.reason))).toEqual(
      new Set(['malformed_receipt', 'unknown_kid', 'bad_signature', 'not_canonical']),
    );
  });

  it('use the RFC 8037 Appendix A key, whose thumbprint and signature the RFC publishes', () => {
    const rfcKey = createPrivateKey(vectors.keys.current.privateKeyPem);
    expect(receiptKid(rfcKey)).toBe('kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k'); // RFC 8037 A.3
    const signer = createReceiptSigner(rfcKey);
    const signed = signer.sign(Buffer.from('eyJhbGciOiJFZERTQSJ9.RXhhbXBsZSBvZiBFZDI1NTE5IHNpZ25pbmc'));
    expect(signed.toString('base64url')).toBe(
      'hgyY0il_MGCjP0JzlnLWG1PPOt7-09PGcvMg3AIbQR6dWbhijcNR4ki4iylGjg5BhVsPt9g7sVvpAr_MuM0KAg', // RFC 8037 A.4
    );
  });

  describe.each(Object.entries(vectors.keys))('key %s', (_name, key) => {
    it('has a public PEM and JWK that belong to its private key', () => {
      const privateKey = createPrivateKey(key.privateKeyPem);
      expect(createPublicKey(privateKey).export({ format: 'pem', type: 'spki' })).toBe(key.publicKeyPem);
      expect(publicJwk(privateKey)).toEqual(key.jwk);
      expect(publicJwk(createPublicKey(key.publicKeyPem))).toEqual(key.jwk);
    });
  });

  describe.each(vectors.valid)('valid: $name', (vector) => {
    it('has the published canonical text', () => {
      expect(canonicalJson(vector.decision)).toBe(vector.canonical);
    });

    it('is reproduced exactly by signing with the vector key (Ed25519 is deterministic)', () => {
      const signer = vectorKeys
        .map((key) => createReceiptSigner(key))
        .find((candidate) => candidate.kid === vector.receipt.kid);
      expect(signer).toBeDefined();
      expect(signReceipt(vector.decision, signer!)).toEqual(vector.receipt);
    });

    it('verifies against its JWKS', () => {
      expect(verifyReceiptWith(vector.decision, vector.receipt, keysOf(vector.jwks))).toEqual({
        ok: true,
        kid: vector.receipt.kid,
      });
    });
  });

  describe.each(vectors.invalid)('invalid: $name', (vector) => {
    it(`fails with ${vector.reason}`, () => {
      const result = verifyReceiptWith(vector.decision, vector.receipt, keysOf(vector.jwks));
      expect(result).toMatchObject({ ok: false, reason: vector.reason });
    });
  });
});

describe('signReceipt and verifyReceiptWith', () => {
  it('round-trip for any JSON object, whatever order its keys were inserted in', () => {
    fc.assert(
      fc.property(unsignedObject, fc.integer(), (value, seed) => {
        const receipt = signReceipt(value, signerA);
        expect(receipt.alg).toBe('EdDSA');
        expect(receipt.kid).toBe(signerA.kid);
        expect(receipt.signature).toMatch(/^[A-Za-z0-9_-]{86}$/);
        expect(verifyReceiptWith(value, receipt, keysA)).toEqual({ ok: true, kid: signerA.kid });
        const reordered = reorderKeys(value, seed) as JsonObject;
        expect(verifyReceiptWith(reordered, receipt, keysA).ok).toBe(true);
      }),
    );
  });

  it('refuse any change to a signed object', () => {
    fc.assert(
      fc.property(unsignedObject, fc.nat(), safeJsonValue, (value, pick, replacement) => {
        const paths = allPaths(value).slice(1);
        const path = paths[pick % paths.length]!;
        const changed = replaceAt(value, path, replacement) as JsonObject;
        fc.pre(canonicalJson(changed) !== canonicalJson(value));
        const result = verifyReceiptWith(changed, signReceipt(value, signerA), keysA);
        expect(result).toMatchObject({ ok: false, reason: 'bad_signature' });
      }),
    );
  });

  it('refuse a key added or removed', () => {
    fc.assert(
      fc.property(unsignedObject, jsonString, (value, extra) => {
        fc.pre(extra !== 'receipt');
        const receipt = signReceipt(value, signerA);
        const [first] = Object.keys(value);
        const { [first!]: _removed, ...rest } = value;
        expect(verifyReceiptWith(rest, receipt, keysA).ok).toBe(false);
        if (!Object.hasOwn(value, extra)) {
          expect(verifyReceiptWith({ ...value, [extra]: null }, receipt, keysA).ok).toBe(false);
        }
      }),
    );
  });

  it('never accept a signature by key A under key B’s kid, nor A’s kid once A is not listed', () => {
    fc.assert(
      fc.property(unsignedObject, (value) => {
        const byA = signReceipt(value, signerA);
        expect(verifyReceiptWith(value, { ...byA, kid: signerB.kid }, keysAB)).toMatchObject({
          ok: false,
          reason: 'bad_signature',
        });
        expect(verifyReceiptWith(value, byA, receiptKeysOf([keyB.publicKey]))).toMatchObject({
          ok: false,
          reason: 'unknown_kid',
        });
      }),
    );
  });

  it('never accept anything an agent’s HMAC secret can make', () => {
    fc.assert(
      fc.property(unsignedObject, fc.string(), fc.string(), (value, secret, alg) => {
        const hmac = (key: string) => createHmac('sha256', key).update(canonicalJson(value), 'utf8').digest();
        // 64 bytes, the length of an Ed25519 signature, from the secret alone.
        const padded = Buffer.concat([hmac(secret), hmac(`${secret}\u0000`)]).toString('base64url');
        const candidates: unknown[] = [
          hmac(secret).toString('hex'),
          { alg: 'EdDSA', kid: signerA.kid, signature: hmac(secret).toString('base64url') },
          { alg: 'EdDSA', kid: signerA.kid, signature: padded },
          { alg, kid: signerA.kid, signature: padded },
          { alg: 'EdDSA', kid: secret, signature: padded },
        ];
        for (const candidate of candidates)
          expect(verifyReceiptWith(value, candidate, keysAB).ok).toBe(false);
      }),
    );
  });

  it('never accept an arbitrary JSON value as a receipt', () => {
    fc.assert(
      fc.property(unsignedObject, safeJsonValue, (value, receipt) => {
        expect(verifyReceiptWith(value, receipt, keysAB).ok).toBe(false);
      }),
    );
  });

  it('accepts only the one base64url spelling of a signature', () => {
    const value = { runId: 'run_1' };
    const { signature } = signReceipt(value, signerA);
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    // The last character carries 4 unused bits: flipping one still decodes to the same 64 bytes.
    const last = alphabet[alphabet.indexOf(signature.at(-1)!) ^ 1]!;
    const respelled = `${signature.slice(0, -1)}${last}`;
    expect(Buffer.from(respelled, 'base64url')).toEqual(Buffer.from(signature, 'base64url'));
    for (const spelling of [
      respelled,
      `${signature}==`,
      Buffer.from(signature, 'base64url').toString('base64'),
    ]) {
      if (spelling === signature) continue;
      expect(
        verifyReceiptWith(value, { alg: 'EdDSA', kid: signerA.kid, signature: spelling }, keysA),
      ).toMatchObject({ ok: false, reason: 'malformed_receipt' });
    }
  });

  it.each([
    ['an old hex HMAC receipt', 'ab'.repeat(32), 'the HMAC receipt of earlier versions'],
    ['null', null, 'the receipt must be an object { alg, kid, signature }, not null'],
    ['a missing alg', { kid: 'k', signature: 'x' }, 'receipt.alg: is missing (it must be "EdDSA")'],
    [
      'alg HS256',
      { alg: 'HS256', kid: 'k', signature: 'x' },
      'receipt.alg: must be "EdDSA", not the string "HS256"',
    ],
    [
      'a numeric kid',
      { alg: 'EdDSA', kid: 7, signature: 'x' },
      'receipt.kid: must be a string, not the number 7',
    ],
    [
      'a short signature',
      { alg: 'EdDSA', kid: 'k', signature: 'AAAA' },
      'receipt.signature: must be 86 characters',
    ],
    ['an extra field', { ...signReceipt({ a: 1 }, signerA), iat: 1 }, 'receipt: has unknown fields: iat'],
  ])('says which field of a malformed receipt is wrong: %s', (_label, receipt, message) => {
    const result = verifyReceiptWith({ a: 1 }, receipt, keysA);
    expect(result).toMatchObject({ ok: false, reason: 'malformed_receipt' });
    if (!result.ok) expect(result.message).toContain(message);
  });

  it('names the unknown kid and the kids it knows', () => {
    const receipt = signReceipt({ a: 1 }, signerB);
    const result = verifyReceiptWith({ a: 1 }, receipt, keysA);
    expect(result).toMatchObject({ ok: false, reason: 'unknown_kid' });
    if (!result.ok)
      expect(result.message).toContain(
        `"${signerB.kid}" is not one of the keys in the JWKS (${signerA.kid})`,
      );
  });

  it('reports a value that is not canonical JSON as not_canonical, with where', () => {
    const receipt = signReceipt({ amount: 1 }, signerA);
    const result = verifyReceiptWith({ amount: 1.5 }, receipt, keysA);
    expect(result).toMatchObject({ ok: false, reason: 'not_canonical' });
    if (!result.ok) expect(result.message).toContain('1.5 is not an integer at amount');
  });

  it('does not verify with a non-Ed25519 key, even one listed under the kid', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const receipt = signReceipt({ a: 1 }, signerA);
    const keys = new Map([[signerA.kid, rsa.publicKey]]);
    expect(verifyReceiptWith({ a: 1 }, receipt, keys)).toMatchObject({ ok: false, reason: 'unknown_kid' });
  });

  it('refuses to sign, and to verify, an object that still has its receipt field', () => {
    const receipt = signReceipt({ a: 1 }, signerA);
    expect(() => signReceipt({ a: 1, receipt: 'x' }, signerA)).toThrow(/remove the receipt field/);
    expect(verifyReceiptWith({ a: 1, receipt }, receipt, keysA)).toMatchObject({
      ok: false,
      reason: 'bad_signature',
      message: expect.stringContaining('still has its receipt field'),
    });
  });
});

describe('createReceiptSigner', () => {
  it('takes Ed25519 private keys only', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    expect(() => createReceiptSigner(rsa.privateKey)).toThrow('not a rsa private key');
    expect(() => createReceiptSigner(keyA.publicKey)).toThrow('not a ed25519 public key');
  });

  it('names the signer by its public key’s thumbprint', () => {
    expect(signerA.kid).toBe(receiptKid(keyA.publicKey));
    expect(signerA.kid).toBe(publicJwk(keyA.publicKey).kid);
    expect(signerA.publicKey.equals(keyA.publicKey)).toBe(true);
  });
});

describe('JWKS', () => {
  it('publishes public keys only, even when given a private key', () => {
    const jwk = publicJwk(keyA.privateKey);
    expect(Object.keys(jwk)).toEqual(['kty', 'crv', 'x', 'kid', 'alg', 'use']);
    expect(jwk).toEqual(publicJwk(keyA.publicKey));
  });

  it('lists the current key first, then previous ones, each once', () => {
    const jwks = jwksOf([keyA.publicKey, keyB.publicKey, keyA.privateKey]);
    expect(jwks.keys.map((jwk) => jwk.kid)).toEqual([signerA.kid, signerB.kid]);
  });

  it('rotation: a decision signed by the previous key verifies while the JWKS lists it; an unknown kid does not', () => {
    const decision = { runId: 'run_1', status: 'approved' };
    const byPrevious = signReceipt(decision, signerB);
    const published = JSON.parse(JSON.stringify(jwksOf([keyA.publicKey, keyB.publicKey]))) as unknown;
    expect(verifyReceiptWith(decision, byPrevious, keysOf(published))).toEqual({
      ok: true,
      kid: signerB.kid,
    });
    const retired = JSON.parse(JSON.stringify(jwksOf([keyA.publicKey]))) as unknown;
    expect(verifyReceiptWith(decision, byPrevious, keysOf(retired))).toMatchObject({
      ok: false,
      reason: 'unknown_kid',
    });
  });

  it('reads back what it publishes', () => {
    const keys = keysOf(jwksOf([keyA.publicKey, keyB.publicKey]));
    expect([...keys.keys()]).toEqual([signerA.kid, signerB.kid]);
    expect(keys.get(signerB.kid)!.equals(keyB.publicKey)).toBe(true);
  });

  it('ignores keys that are not OKP/Ed25519', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ format: 'jwk' });
    const x25519 = generateKeyPairSync('x25519').publicKey.export({ format: 'jwk' });
    const keys = keysOf({ keys: [rsa, x25519, publicJwk(keyA.publicKey)] });
    expect([...keys.keys()]).toEqual([signerA.kid]);
  });

  const jwkA = (): JsonObject => ({ ...publicJwk(keyA.publicKey) });
  const kidA = () => signerA.kid;
  it.each<[string, () => unknown, string]>([
    ['not an object', () => 'keys', 'not a JWKS: expected an object { keys: [...] }, not the string "keys"'],
    ['no keys', () => ({}), 'not a JWKS: keys: is missing'],
    [
      'a key that is not an object',
      () => ({ keys: [jwkA(), 3] }),
      'not a JWKS: keys[1]: must be a JWK object',
    ],
    ['no Ed25519 key', () => ({ keys: [] }), 'the JWKS has no Ed25519 (OKP) keys'],
    [
      'a kid that is not the thumbprint',
      () => ({ keys: [{ ...jwkA(), kid: 'countersign-2026' }] }),
      `keys[0].kid: "countersign-2026" is not the key's RFC 7638 thumbprint (${kidA()})`,
    ],
    ['no kid', () => ({ keys: [{ kty: 'OKP', crv: 'Ed25519', x: jwkA().x }] }), 'keys[0].kid: is missing'],
    ['private material', () => ({ keys: [{ ...jwkA(), d: 'secret' }] }), 'keys[0].d: is a private key'],
    ['a short x', () => ({ keys: [{ ...jwkA(), x: 'AAAA' }] }), 'keys[0].x: must be 43 characters'],
    ['use enc', () => ({ keys: [{ ...jwkA(), use: 'enc' }] }), 'keys[0].use: must be "sig" when present'],
    [
      'alg Ed448',
      () => ({ keys: [{ ...jwkA(), alg: 'Ed448' }] }),
      'keys[0].alg: must be "EdDSA" when present',
    ],
  ])('refuses a JWKS with %s, saying where', (_label, jwks, message) => {
    const read = keysFromJwks(jwks());
    expect(read.ok).toBe(false);
    if (!read.ok) expect(read.message).toContain(message);
  });
});
