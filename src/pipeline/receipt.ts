import { createHash, createPublicKey, type KeyObject, sign, verify } from 'node:crypto';
import { z } from 'zod';
import { canonicalJson, isCanonicalJsonError } from './canonical-json.ts';
import { describeValue } from './diagnostics.ts';
import { CountersignError } from './errors.ts';
import type { JsonObject } from './json.ts';

/**
 * Countersign's signature on a decision (docs/receipts.md): Ed25519 over the UTF-8 bytes of the
 * canonical JSON of the decision without its `receipt` field. Only the holder of the private key can
 * make one; agents verify it with the public keys in the JWKS.
 */
export type Receipt = {
  readonly alg: 'EdDSA';
  /** RFC 7638 thumbprint of the signing key's public JWK (`receiptKid`). */
  readonly kid: string;
  /** Unpadded base64url of the 64-byte Ed25519 signature. */
  readonly signature: string;
};

/** A private key ready to sign receipts, with the kid verifiers look it up by. */
export interface ReceiptSigner {
  readonly kid: string;
  readonly publicKey: KeyObject;
  sign(data: Uint8Array): Buffer;
}

/** Public keys that verify receipts, by kid (build with `receiptKeysOf` or `keysFromJwks`). */
export type ReceiptKeys = ReadonlyMap<string, KeyObject>;

/** An Ed25519 public key as published in the JWKS (RFC 8037). */
export type ReceiptJwk = {
  readonly kty: 'OKP';
  readonly crv: 'Ed25519';
  readonly x: string;
  readonly kid: string;
  readonly alg: 'EdDSA';
  readonly use: 'sig';
};

/** The body of `GET /.well-known/jwks.json`: the current key first, then previous ones. */
export type ReceiptJwks = { readonly keys: readonly ReceiptJwk[] };

export type ReceiptFailureReason = 'malformed_receipt' | 'unknown_kid' | 'bad_signature' | 'not_canonical';

export type ReceiptVerification =
  | { readonly ok: true; readonly kid: string }
  | { readonly ok: false; readonly reason: ReceiptFailureReason; readonly message: string };

const SIGNATURE_BYTES = 64;
const PUBLIC_KEY_BYTES = 32;

/**
 * The kid of an Ed25519 key: its RFC 7638 JWK thumbprint, unpadded base64url SHA-256 of
 * `{"crv":"Ed25519","kty":"OKP","x":"…"}`. A private key gives its public key's kid.
 * @example receiptKid(publicKey) // 'kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k' for the RFC 8037 test key
 */
export function receiptKid(key: KeyObject): string {
  return thumbprint(rawPublicKey(key));
}

/**
 * A signer for an Ed25519 private key. Throws a TypeError for any other key: keys from the
 * environment are checked when they are loaded (src/config/signing-key.ts), so reaching it is a bug.
 * @example const signer = createReceiptSigner(privateKey); signReceipt(unsignedDecision, signer)
 */
export function createReceiptSigner(privateKey: KeyObject): ReceiptSigner {
  if (privateKey.type !== 'private' || privateKey.asymmetricKeyType !== 'ed25519') {
    throw new CountersignError(
      'invalid_argument',
      `createReceiptSigner needs an Ed25519 private key, not a ${privateKey.asymmetricKeyType ?? 'secret'} ${privateKey.type} key`,
    );
  }
  const publicKey = createPublicKey(privateKey);
  return {
    kid: receiptKid(publicKey),
    publicKey,
    // Ed25519 hashes internally: the algorithm argument must be null.
    sign: (data) => sign(null, data, privateKey),
  };
}

/**
 * Signs `unsigned` (a decision without its `receipt` field). Throws if `unsigned` has a `receipt`
 * field (the signature must not cover one) or is not canonical JSON: both are bugs in the caller.
 * @example const decision = { ...unsigned, receipt: signReceipt(unsigned, signer) };
 */
export function signReceipt(unsigned: JsonObject, signer: ReceiptSigner): Receipt {
  if (Object.hasOwn(unsigned, 'receipt')) {
    throw new CountersignError(
      'invalid_argument',
      'signReceipt: remove the receipt field first; the signature covers everything else',
    );
  }
  const signature = signer.sign(Buffer.from(canonicalJson(unsigned), 'utf8'));
  return { alg: 'EdDSA', kid: signer.kid, signature: signature.toString('base64url') };
}

/**
 * Whether `receipt` is a valid Countersign receipt over exactly `unsigned` by one of `keys`.
 * Accepts only `alg: "EdDSA"` with a 64-byte signature by a listed Ed25519 key: no shared secret
 * can produce one.
 * @example
 * const { receipt, ...unsigned } = decision;
 * const check = verifyReceiptWith(unsigned, receipt, keys);
 * if (!check.ok) throw new Error(`decision ${decision.runId}: ${check.message}`);
 */
export function verifyReceiptWith(
  unsigned: JsonObject,
  receipt: unknown,
  keys: ReceiptKeys,
): ReceiptVerification {
  const parsed = receiptSchema.safeParse(receipt);
  if (!parsed.success) return malformed(receipt, parsed.error);
  const { kid, signature } = parsed.data;
  const key = keys.get(kid);
  if (key === undefined) {
    return {
      ok: false,
      reason: 'unknown_kid',
      message: `receipt.kid ${quoteKid(kid)} is not one of the keys in the JWKS (${[...keys.keys()].join(', ') || 'none'}): the decision was signed by another key, or the JWKS is out of date`,
    };
  }
  if (key.asymmetricKeyType !== 'ed25519') {
    // Only Ed25519 verifies receipts, whatever a hand-built map holds.
    return {
      ok: false,
      reason: 'unknown_kid',
      message: `the key listed for receipt.kid ${quoteKid(kid)} is not an Ed25519 key (it is ${key.asymmetricKeyType ?? 'a secret key'})`,
    };
  }
  if (Object.hasOwn(unsigned, 'receipt')) {
    return {
      ok: false,
      reason: 'bad_signature',
      message: 'the decision passed still has its receipt field: verify the decision without it',
    };
  }
  let text: string;
  try {
    text = canonicalJson(unsigned);
  } catch (error) {
    if (!isCanonicalJsonError(error)) throw error;
    return {
      ok: false,
      reason: 'not_canonical',
      message: `the decision is not canonical JSON (${error.message}), so it is not what Countersign signed`,
    };
  }
  const bytes = decodeBase64url(signature, SIGNATURE_BYTES)!; // the schema checked it
  if (!verify(null, Buffer.from(text, 'utf8'), key, bytes)) {
    return {
      ok: false,
      reason: 'bad_signature',
      message: `the receipt signature does not verify with key ${kid}: the decision was changed after it was signed, or another key signed it`,
    };
  }
  return { ok: true, kid };
}

/**
 * The public JWK for a key (a private key gives its public part; the private scalar is never
 * exported).
 * @example publicJwk(key) // { kty: 'OKP', crv: 'Ed25519', x: '11qY…', kid: 'kPrK…', alg: 'EdDSA', use: 'sig' }
 */
export function publicJwk(key: KeyObject): ReceiptJwk {
  const x = rawPublicKey(key);
  return { kty: 'OKP', crv: 'Ed25519', x, kid: thumbprint(x), alg: 'EdDSA', use: 'sig' };
}

/**
 * The JWKS for the current key and the previous ones, in that order (a key listed twice appears once).
 * @example jwksOf([current, ...previous]) // { keys: [currentJwk, …previousJwks] }
 */
export function jwksOf(publicKeys: readonly KeyObject[]): ReceiptJwks {
  const byKid = new Map<string, ReceiptJwk>();
  for (const key of publicKeys) {
    const jwk = publicJwk(key);
    if (!byKid.has(jwk.kid)) byKid.set(jwk.kid, jwk);
  }
  return { keys: [...byKid.values()] };
}

/** The verification keys for `publicKeys`, by kid. */
export function receiptKeysOf(publicKeys: readonly KeyObject[]): ReceiptKeys {
  return new Map(
    publicKeys.map((key) => [receiptKid(key), key.type === 'private' ? createPublicKey(key) : key]),
  );
}

/**
 * Reads a JWKS (e.g. fetched from `/.well-known/jwks.json`) into verification keys. Keys other than
 * OKP/Ed25519 are ignored; an Ed25519 key whose kid is not its thumbprint, that carries private
 * material, or that is not for EdDSA signatures refuses the whole set.
 * @example
 * const read = keysFromJwks(await (await fetch(jwksUrl)).json());
 * if (!read.ok) throw new Error(read.message);
 */
export function keysFromJwks(
  jwks: unknown,
): { readonly ok: true; readonly keys: ReceiptKeys } | { readonly ok: false; readonly message: string } {
  const outer = jwksSchema.safeParse(jwks);
  if (!outer.success) return { ok: false, message: `not a JWKS: ${firstIssue(outer.error, '')}` };
  const keys = new Map<string, KeyObject>();
  for (const [index, candidate] of outer.data.keys.entries()) {
    if (candidate.kty !== 'OKP' || candidate.crv !== 'Ed25519') continue; // other keys serve other purposes
    const jwk = ed25519JwkSchema.safeParse(candidate);
    if (!jwk.success) return { ok: false, message: firstIssue(jwk.error, `keys[${index}]`) };
    const { x, kid } = jwk.data;
    const expected = thumbprint(x);
    if (kid !== expected) {
      return {
        ok: false,
        message: `keys[${index}].kid: ${JSON.stringify(kid)} is not the key's RFC 7638 thumbprint (${expected}); Countersign publishes kid = thumbprint`,
      };
    }
    keys.set(kid, createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' }));
  }
  if (keys.size === 0) return { ok: false, message: 'the JWKS has no Ed25519 (OKP) keys' };
  return { ok: true, keys };
}

/**
 * Decodes unpadded base64url of exactly `bytes` bytes, or undefined. Node's decoder skips invalid
 * characters and ignores stray bits; this accepts only the one spelling that re-encodes identically.
 */
function decodeBase64url(text: string, bytes: number): Buffer | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return undefined;
  const decoded = Buffer.from(text, 'base64url');
  return decoded.length === bytes && decoded.toString('base64url') === text ? decoded : undefined;
}

const SIGNATURE_LENGTH = Math.ceil((SIGNATURE_BYTES * 4) / 3);
const X_LENGTH = Math.ceil((PUBLIC_KEY_BYTES * 4) / 3);

const receiptSchema = z.strictObject(
  {
    alg: z.literal('EdDSA', { error: mustBe('"EdDSA"') }),
    kid: z.string({ error: mustBe('a string') }).min(1, 'is empty'),
    signature: z
      .string({ error: mustBe('a string') })
      .refine(
        (text) => decodeBase64url(text, SIGNATURE_BYTES) !== undefined,
        `must be ${SIGNATURE_LENGTH} characters of unpadded base64url (a ${SIGNATURE_BYTES}-byte Ed25519 signature)`,
      ),
  },
  {
    error: (issue) =>
      issue.code === 'unrecognized_keys' ? `has unknown fields: ${issue.keys.join(', ')}` : undefined,
  },
);

/** A kid for a message: it comes from the decision, so a huge one is cut short. */
function quoteKid(kid: string): string {
  return JSON.stringify(kid.length > 64 ? `${kid.slice(0, 64)}…` : kid);
}

/** An error for a field that must be `what`: "is missing (…)" or "must be …, not <value>". */
function mustBe(what: string): (issue: { readonly input?: unknown }) => string {
  return ({ input }) =>
    input === undefined ? `is missing (it must be ${what})` : `must be ${what}, not ${describeValue(input)}`;
}

function malformed(receipt: unknown, error: z.ZodError): ReceiptVerification {
  if (typeof receipt === 'string' && /^[0-9a-f]{64}$/.test(receipt)) {
    return {
      ok: false,
      reason: 'malformed_receipt',
      message:
        'the receipt is a hex string, the HMAC receipt of earlier versions: decisions are now signed with Ed25519 (receipt: { alg, kid, signature })',
    };
  }
  if (typeof receipt !== 'object' || receipt === null || Array.isArray(receipt)) {
    return {
      ok: false,
      reason: 'malformed_receipt',
      message: `the receipt must be an object { alg, kid, signature }, not ${describeValue(receipt)}`,
    };
  }
  return { ok: false, reason: 'malformed_receipt', message: firstIssue(error, 'receipt') };
}

const jwksSchema = z.object(
  {
    keys: z.array(
      z.looseObject(
        { kty: z.unknown().optional(), crv: z.unknown().optional() },
        { error: (issue) => `must be a JWK object, not ${describeValue(issue.input)}` },
      ),
      {
        error: (issue) => (issue.input === undefined ? 'is missing' : 'must be a list of JWKs'),
      },
    ),
  },
  { error: (issue) => `expected an object { keys: [...] }, not ${describeValue(issue.input)}` },
);

const ed25519JwkSchema = z
  .looseObject({
    x: z
      .string({ error: 'is missing' })
      .refine(
        (text) => decodeBase64url(text, PUBLIC_KEY_BYTES) !== undefined,
        `must be ${X_LENGTH} characters of unpadded base64url (a ${PUBLIC_KEY_BYTES}-byte Ed25519 public key)`,
      ),
    kid: z.string({ error: 'is missing: Countersign identifies keys by kid' }),
    alg: z.literal('EdDSA', { error: 'must be "EdDSA" when present' }).optional(),
    use: z.literal('sig', { error: 'must be "sig" when present' }).optional(),
    d: z.undefined({ error: 'is a private key: publish public keys only' }).optional(),
  })
  .transform(({ x, kid }) => ({ x, kid }));

/** `path.field: message` for the first issue, e.g. `receipt.alg: must be "EdDSA" (Ed25519), not …`. */
function firstIssue(error: z.ZodError, prefix: string): string {
  const issue = error.issues[0]!;
  const path = issue.path.map((segment) =>
    typeof segment === 'number' ? `[${segment}]` : `.${String(segment)}`,
  );
  const where = `${prefix}${path.join('')}`.replace(/^\./, '');
  return where === '' ? issue.message : `${where}: ${issue.message}`;
}

/** Unpadded base64url of the raw 32-byte public key (the JWK `x`). */
function rawPublicKey(key: KeyObject): string {
  if (key.asymmetricKeyType !== 'ed25519') {
    throw new CountersignError(
      'invalid_argument',
      `expected an Ed25519 key, not a ${key.asymmetricKeyType ?? 'secret'} key`,
    );
  }
  const publicKey = key.type === 'private' ? createPublicKey(key) : key;
  const { x } = publicKey.export({ format: 'jwk' });
  if (typeof x !== 'string') throw new CountersignError('invalid_argument', 'the Ed25519 key exported no x');
  return x;
}

function thumbprint(x: string): string {
  // RFC 7638: the required members in lexicographic order, no whitespace — canonical JSON exactly.
  const members = canonicalJson({ crv: 'Ed25519', kty: 'OKP', x });
  return createHash('sha256').update(members, 'utf8').digest('base64url');
}
