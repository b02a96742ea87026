/**
 * Countersign's receipt signing key, from the environment (docs/receipts.md): the current Ed25519
 * private key, inline or from a file, and the previous public keys that stay in the JWKS after a
 * rotation. Problems are returned as values that name the variable and the fix.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createReceiptSigner, keysFromJwks, type ReceiptSigner, receiptKid } from '../pipeline/receipt.ts';

/** The variables `loadSigningKeys` reads (a subset of `Env`; any environment record fits). */
export interface SigningKeyEnv {
  /** The PEM itself; `\n` escapes (as env files write newlines) are accepted. */
  readonly COUNTERSIGN_SIGNING_KEY?: string | undefined;
  /** A path to the PEM. */
  readonly COUNTERSIGN_SIGNING_KEY_FILE?: string | undefined;
  /** A file of PEM public keys, or a JWKS, that verify receipts signed before a rotation. */
  readonly COUNTERSIGN_PREVIOUS_PUBLIC_KEYS_FILE?: string | undefined;
}

/** Reads a UTF-8 text file; throws the OS error (as `fs.readFileSync` does). */
export type ReadTextFile = (path: string) => string;

export type SigningKeysResult =
  | {
      readonly ok: true;
      readonly signer: ReceiptSigner;
      /** For the JWKS: the current key first, then previous ones, each once. */
      readonly publicKeys: readonly KeyObject[];
    }
  | { readonly ok: false; readonly problems: string[] };

/**
 * The kids of the keys published in test/vectors/receipts.json (RFC 8032 §7.1 TEST 1 and 2): their
 * private keys are public, so a receipt signed with one proves nothing.
 */
const PUBLISHED_TEST_KIDS: ReadonlySet<string> = new Set([
  'kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k',
  'FtIu-VbGrfe_KB6CH7GNwODB72MNxj_ml11dEvO-7kk',
]);

const KEYGEN_HINT = 'generate one with `npm run keygen -- --out countersign-signing-key.pem`';

/**
 * Loads the signing key and the previous public keys. Exactly one of `COUNTERSIGN_SIGNING_KEY` and
 * `COUNTERSIGN_SIGNING_KEY_FILE` must be set; empty values count as unset.
 * @example
 * const keys = loadSigningKeys(env.env);
 * if (!keys.ok) return fail('no signing key', keys.problems);
 */
export function loadSigningKeys(env: SigningKeyEnv, readFile: ReadTextFile = readUtf8): SigningKeysResult {
  const problems: string[] = [];
  const current = loadCurrentKey(env, readFile);
  if (typeof current === 'string') problems.push(current);
  const previous = loadPreviousKeys(env.COUNTERSIGN_PREVIOUS_PUBLIC_KEYS_FILE, readFile);
  if (!Array.isArray(previous)) problems.push(...previous.problems);
  if (typeof current === 'string' || !Array.isArray(previous)) return { ok: false, problems };
  const signer = createReceiptSigner(current);
  const publicKeys = new Map<string, KeyObject>([[signer.kid, signer.publicKey]]);
  for (const key of previous) {
    const kid = receiptKid(key);
    if (!publicKeys.has(kid)) publicKeys.set(kid, key);
  }
  return { ok: true, signer, publicKeys: [...publicKeys.values()] };
}

/**
 * A new Ed25519 signing key, for `npm run keygen`, the demo and tests.
 * @example const { pem, kid } = generateSigningKey(); // pem: '-----BEGIN PRIVATE KEY-----\n…'
 */
export function generateSigningKey(): { privateKey: KeyObject; pem: string; kid: string } {
  const { privateKey } = generateKeyPairSync('ed25519');
  const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  return { privateKey, pem, kid: receiptKid(privateKey) };
}

/** The private key, or the one problem that stops it loading. */
function loadCurrentKey(env: SigningKeyEnv, readFile: ReadTextFile): KeyObject | string {
  const inline = present(env.COUNTERSIGN_SIGNING_KEY);
  const path = present(env.COUNTERSIGN_SIGNING_KEY_FILE);
  if (inline !== undefined && path !== undefined) {
    return 'COUNTERSIGN_SIGNING_KEY and COUNTERSIGN_SIGNING_KEY_FILE are both set: set only one (the PEM itself, or the path to it)';
  }
  if (inline === undefined && path === undefined) {
    return `COUNTERSIGN_SIGNING_KEY is not set: Countersign signs every decision with an Ed25519 key; ${KEYGEN_HINT} and set COUNTERSIGN_SIGNING_KEY_FILE to its path (or put the PEM itself in COUNTERSIGN_SIGNING_KEY)`;
  }
  let name: string;
  let text: string;
  if (inline !== undefined) {
    name = 'COUNTERSIGN_SIGNING_KEY';
    text = unescapeEnvPem(inline);
    if (!text.includes('-----BEGIN') && looksLikePath(text)) {
      return `COUNTERSIGN_SIGNING_KEY looks like a file path (${text}): set COUNTERSIGN_SIGNING_KEY_FILE to it instead, or put the PEM itself in COUNTERSIGN_SIGNING_KEY`;
    }
  } else {
    name = `COUNTERSIGN_SIGNING_KEY_FILE (${path})`;
    const read = readText('COUNTERSIGN_SIGNING_KEY_FILE', path!, readFile);
    if (!read.ok) return read.problem;
    text = read.text;
  }
  const key = parsePrivateKeyPem(name, text);
  if (typeof key === 'string') return key;
  if (PUBLISHED_TEST_KIDS.has(receiptKid(key))) {
    return `${name} is the published test key from test/vectors/receipts.json: anyone can sign with it; ${KEYGEN_HINT}`;
  }
  return key;
}

function parsePrivateKeyPem(name: string, text: string): KeyObject | string {
  const blocks = pemBlocks(text);
  const [block] = blocks;
  if (block === undefined) {
    return `${name} is not a PEM private key: expected text starting with -----BEGIN PRIVATE KEY-----; ${KEYGEN_HINT}`;
  }
  if (blocks.length > 1) {
    return `${name} holds ${blocks.length} PEM blocks (${blocks.map((b) => b.label).join(', ')}): it must hold exactly one private key`;
  }
  const refused = refusedPrivateLabel(block.label);
  if (refused !== undefined) return `${name} is ${refused}`;
  let key: KeyObject;
  try {
    key = createPrivateKey(block.text);
  } catch {
    return `${name} holds a -----BEGIN ${block.label}----- block that does not decode (truncated or damaged?); ${KEYGEN_HINT}`;
  }
  if (key.asymmetricKeyType !== 'ed25519') {
    return `${name} is ${describeKeyType(key)}; Countersign signs with Ed25519: ${KEYGEN_HINT}`;
  }
  return key;
}

/** Why a PEM label cannot be the signing key, or undefined to try it. */
function refusedPrivateLabel(label: string): string | undefined {
  if (label === 'ENCRYPTED PRIVATE KEY') {
    return 'encrypted with a passphrase; Countersign reads an unencrypted PKCS#8 key (decrypt it with `openssl pkey -in key.pem -out plain.pem`, and keep that file mode 0600)';
  }
  if (label === 'OPENSSH PRIVATE KEY') {
    return `an OpenSSH key; Countersign reads PKCS#8 PEM (-----BEGIN PRIVATE KEY-----): ${KEYGEN_HINT}`;
  }
  if (label.endsWith('PUBLIC KEY')) {
    return 'a public key; Countersign needs the private key (-----BEGIN PRIVATE KEY-----) to sign';
  }
  if (!label.endsWith('PRIVATE KEY')) return `a ${label}, not a private key (-----BEGIN PRIVATE KEY-----)`;
  return undefined;
}

/** The previous public keys (none when the variable is unset), or the problems with the file. */
function loadPreviousKeys(
  path: string | undefined,
  readFile: ReadTextFile,
): KeyObject[] | { readonly problems: string[] } {
  const name = 'COUNTERSIGN_PREVIOUS_PUBLIC_KEYS_FILE';
  const file = present(path);
  if (file === undefined) return [];
  const read = readText(name, file, readFile);
  if (!read.ok) return { problems: [read.problem] };
  const text = read.text.trim();
  if (text.startsWith('{')) return previousKeysFromJwks(`${name} (${file})`, text);
  const blocks = pemBlocks(text);
  if (blocks.length === 0) {
    return {
      problems: [
        `${name} (${file}) holds neither PEM public keys (-----BEGIN PUBLIC KEY-----) nor a JWKS ({ "keys": [...] })`,
      ],
    };
  }
  const keys: KeyObject[] = [];
  const problems: string[] = [];
  for (const [index, block] of blocks.entries()) {
    const where = `${name} (${file}), key ${index + 1}`;
    if (block.label !== 'PUBLIC KEY') {
      const hint = block.label.endsWith('PRIVATE KEY')
        ? 'a private key: keep only public keys here (`openssl pkey -in old-key.pem -pubout` prints one) and destroy retired private keys'
        : `a ${block.label}, not a public key (-----BEGIN PUBLIC KEY-----)`;
      problems.push(`${where} is ${hint}`);
      continue;
    }
    let key: KeyObject;
    try {
      key = createPublicKey(block.text);
    } catch {
      problems.push(`${where} does not decode (truncated or damaged?)`);
      continue;
    }
    if (key.asymmetricKeyType === 'ed25519') keys.push(key);
    else problems.push(`${where} is ${describeKeyType(key)}; receipts are signed with Ed25519 keys only`);
  }
  return problems.length > 0 ? { problems } : keys;
}

function previousKeysFromJwks(name: string, text: string): KeyObject[] | { readonly problems: string[] } {
  let jwks: unknown;
  try {
    jwks = JSON.parse(text);
  } catch (error) {
    return { problems: [`${name} is not valid JSON (${(error as Error).message})`] };
  }
  const read = keysFromJwks(jwks);
  return read.ok ? [...read.keys.values()] : { problems: [`${name}: ${read.message}`] };
}

/** The file's text, or a problem naming the variable, the path and the OS error. */
function readText(
  variable: string,
  path: string,
  readFile: ReadTextFile,
): { readonly ok: true; readonly text: string } | { readonly ok: false; readonly problem: string } {
  try {
    return { ok: true, text: readFile(path) };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // Node's message ends with the system call and path (", open '/x'"); ours already names the path.
    const reason = (error instanceof Error ? error.message : String(error)).replace(/, \w+( '.*')?$/s, '');
    const fix =
      code === 'ENOENT'
        ? ': check the path (a relative path starts from the directory Countersign runs in)'
        : code === 'EACCES' || code === 'EPERM'
          ? ': make it readable by the user Countersign runs as'
          : code === 'EISDIR'
            ? ': it is a directory; give the path of the file'
            : '';
    return { ok: false, problem: `${variable}: cannot read ${path} (${reason})${fix}` };
  }
}

interface PemBlock {
  readonly label: string;
  readonly text: string;
}

function pemBlocks(text: string): PemBlock[] {
  return [...text.matchAll(/-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g)].map((match) => ({
    label: match[1]!,
    text: match[0],
  }));
}

/**
 * Env files hold one line per variable, so a PEM arrives with `\n` escapes, and `docker --env-file`
 * keeps surrounding quotes. Neither a backslash nor a quote can occur in a PEM, so both are undone.
 */
function unescapeEnvPem(value: string): string {
  const trimmed = value.trim();
  const unquoted = /^(["']).*\1$/s.test(trimmed) ? trimmed.slice(1, -1) : trimmed;
  return unquoted.replace(/\\r\\n|\\n/g, '\n');
}

function looksLikePath(text: string): boolean {
  return !text.includes('\n') && (/^[./~]/.test(text) || /\.(pem|key)$/i.test(text));
}

function present(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}

function describeKeyType(key: KeyObject): string {
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return 'an RSA key';
    case 'rsa-pss':
      return 'an RSA-PSS key';
    case 'ec': {
      const curve = key.asymmetricKeyDetails?.namedCurve;
      return `an EC key (${CURVE_NAMES[curve ?? ''] ?? curve ?? 'unknown curve'})`;
    }
    case 'ed448':
      return 'an Ed448 key';
    case 'x25519':
      return 'an X25519 key';
    case 'x448':
      return 'an X448 key';
    case 'dsa':
      return 'a DSA key';
    default:
      return `a ${key.asymmetricKeyType ?? 'secret'} key`;
  }
}

const CURVE_NAMES: Readonly<Record<string, string>> = {
  prime256v1: 'P-256',
  secp384r1: 'P-384',
  secp521r1: 'P-521',
};

function readUtf8(path: string): string {
  return readFileSync(path, 'utf8');
}
