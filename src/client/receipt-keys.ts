/**
 * The public keys that verify decision receipts (docs/receipts.md): pinned by the agent, or Countersign's
 * JWKS fetched once and fetched again when a receipt names a kid it does not have (a rotation) — at
 * most once a minute, so forged kids cannot make the client hammer the server.
 */
import { createPublicKey, type KeyObject } from 'node:crypto';
import { CountersignError, keysFromJwks, type ReceiptKeys, receiptKeysOf } from '../pipeline/index.ts';

/**
 * Keys to pin instead of fetching the JWKS: PEM public keys (`-----BEGIN PUBLIC KEY-----`), Ed25519
 * public `KeyObject`s, or a JWKS object as `/.well-known/jwks.json` serves it.
 */
export type PublicKeysInput = readonly (string | KeyObject)[] | { readonly keys: readonly unknown[] };

/** Where `verifyStep` gets its keys. */
export interface ReceiptKeySource {
  keys(): Promise<ReceiptKeys>;
  /** Fresh keys after a receipt named an unknown kid, or undefined when that is not possible now. */
  refreshForUnknownKid(): Promise<ReceiptKeys | undefined>;
}

/**
 * Reads pinned keys. Throws `CountersignError('invalid_argument')` for anything but Ed25519 public
 * keys: a private key does not belong with an agent, and no other key type signs receipts.
 * @example const keys = pinnedReceiptKeys([readFileSync('countersign-public.pem', 'utf8')]);
 */
export function pinnedReceiptKeys(input: PublicKeysInput): ReceiptKeys {
  if (!Array.isArray(input)) {
    const read = keysFromJwks(input);
    if (!read.ok) throw new CountersignError('invalid_argument', `publicKeys: ${read.message}`);
    return read.keys;
  }
  const list = input as readonly (string | KeyObject)[];
  if (list.length === 0) throw new CountersignError('invalid_argument', 'publicKeys: the list is empty');
  return receiptKeysOf(list.map((key, index) => publicKeyOf(key, index)));
}

function publicKeyOf(key: string | KeyObject, index: number): KeyObject {
  const where = `publicKeys[${index}]`;
  if (typeof key === 'string' && /PRIVATE KEY-----/.test(key)) {
    throw new CountersignError(
      'invalid_argument',
      `${where} is a private key: give agents only the public key (\`openssl pkey -in key.pem -pubout\`)`,
    );
  }
  let object: KeyObject;
  try {
    object = typeof key === 'string' ? createPublicKey(key) : key;
  } catch (error) {
    throw new CountersignError('invalid_argument', `${where} is not a PEM public key`, { cause: error });
  }
  if (object.type !== 'public') {
    throw new CountersignError(
      'invalid_argument',
      `${where} is a ${object.type} key: give agents only the public key`,
    );
  }
  if (object.asymmetricKeyType !== 'ed25519') {
    throw new CountersignError(
      'invalid_argument',
      `${where} is an ${object.asymmetricKeyType ?? 'unknown'} key; Countersign signs receipts with Ed25519`,
    );
  }
  return object;
}

/** Pinned keys never change: an unknown kid stays unknown. */
export function pinnedKeySource(keys: ReceiptKeys): ReceiptKeySource {
  return { keys: async () => keys, refreshForUnknownKid: async () => undefined };
}

/**
 * The JWKS fetched on first use and cached; concurrent callers share one fetch, and a failed fetch is
 * not cached (the next call tries again). `fetchKeys` fetches and reads the JWKS, or throws.
 */
export function jwksKeySource(
  fetchKeys: () => Promise<ReceiptKeys>,
  options: { readonly refetchIntervalMs?: number; readonly now?: () => number } = {},
): ReceiptKeySource {
  const interval = options.refetchIntervalMs ?? 60_000;
  const now = options.now ?? (() => performance.now());
  let cached: Promise<ReceiptKeys> | undefined;
  let lastRefetch = Number.NEGATIVE_INFINITY;
  const load = (): Promise<ReceiptKeys> => {
    const loading = fetchKeys();
    cached = loading;
    loading.catch(() => {
      if (cached === loading) cached = undefined;
    });
    return loading;
  };
  return {
    keys: () => cached ?? load(),
    refreshForUnknownKid: async () => {
      if (now() - lastRefetch < interval) return undefined;
      lastRefetch = now();
      return load();
    },
  };
}
