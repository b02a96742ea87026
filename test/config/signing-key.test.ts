import { createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readEnv } from '../../src/config/env.ts';
import { generateSigningKey, loadSigningKeys, type SigningKeyEnv } from '../../src/config/signing-key.ts';
import {
  jwksOf,
  keysFromJwks,
  receiptKid,
  signReceipt,
  verifyReceiptWith,
} from '../../src/pipeline/receipt.ts';

const dir = mkdtempSync(join(tmpdir(), 'signing-key-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text, { mode: 0o600 });
  return path;
}

const pem = (key: KeyObject): string =>
  key.export({ format: 'pem', type: key.type === 'private' ? 'pkcs8' : 'spki' }).toString();

const current = generateSigningKey();
const previous = generateKeyPairSync('ed25519');
const older = generateKeyPairSync('ed25519');
const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const vectors = JSON.parse(readFileSync(new URL('../vectors/receipts.json', import.meta.url), 'utf8')) as {
  keys: { current: { privateKeyPem: string } };
};

/** The problems of a load that must fail. */
function problems(env: SigningKeyEnv, readFile?: (path: string) => string): string[] {
  const result = loadSigningKeys(env, readFile);
  if (result.ok) throw new Error('expected the load to fail');
  return result.problems;
}

/** The kids of a load that must succeed, current first. */
function kids(env: SigningKeyEnv): string[] {
  const result = loadSigningKeys(env);
  if (!result.ok) throw new Error(result.problems.join('\n'));
  return result.publicKeys.map((key) => receiptKid(key));
}

describe('loadSigningKeys: the current key', () => {
  it('says how to make a key when none is set (empty values count as unset)', () => {
    for (const env of [{}, { COUNTERSIGN_SIGNING_KEY: '', COUNTERSIGN_SIGNING_KEY_FILE: ' ' }]) {
      const [problem, ...rest] = problems(env);
      expect(rest).toEqual([]);
      expect(problem).toMatch(/^COUNTERSIGN_SIGNING_KEY is not set: /);
      expect(problem).toContain('npm run keygen -- --out countersign-signing-key.pem');
      expect(problem).toContain('COUNTERSIGN_SIGNING_KEY_FILE');
    }
  });

  it('refuses both variables at once', () => {
    expect(
      problems({ COUNTERSIGN_SIGNING_KEY: current.pem, COUNTERSIGN_SIGNING_KEY_FILE: '/k.pem' }),
    ).toEqual([
      'COUNTERSIGN_SIGNING_KEY and COUNTERSIGN_SIGNING_KEY_FILE are both set: set only one (the PEM itself, or the path to it)',
    ]);
  });

  it('reads the PEM from COUNTERSIGN_SIGNING_KEY, and signs receipts the JWKS verifies', () => {
    const result = loadSigningKeys({ COUNTERSIGN_SIGNING_KEY: current.pem });
    if (!result.ok) throw new Error(result.problems.join('\n'));
    expect(result.signer.kid).toBe(current.kid);
    expect(result.publicKeys.map((key) => receiptKid(key))).toEqual([current.kid]);
    const read = keysFromJwks(JSON.parse(JSON.stringify(jwksOf(result.publicKeys))));
    if (!read.ok) throw new Error(read.message);
    const decision = { runId: 'run_1', status: 'approved' };
    expect(verifyReceiptWith(decision, signReceipt(decision, result.signer), read.keys).ok).toBe(true);
  });

  it.each([
    ['\\n escapes, as env files write them', current.pem.trim().replaceAll('\n', '\\n')],
    ['\\r\\n escapes', current.pem.replaceAll('\n', '\\r\\n')],
    ['double quotes kept by docker --env-file', `"${current.pem.replaceAll('\n', '\\n')}"`],
    ['single quotes', `'${current.pem}'`],
  ])('accepts a PEM written with %s', (_label, value) => {
    expect(kids({ COUNTERSIGN_SIGNING_KEY: value })).toEqual([current.kid]);
  });

  it('reads the PEM from the file COUNTERSIGN_SIGNING_KEY_FILE names', () => {
    expect(kids({ COUNTERSIGN_SIGNING_KEY_FILE: file('current.pem', current.pem) })).toEqual([current.kid]);
  });

  it('names the path and the OS error when the file cannot be read', () => {
    const missing = join(dir, 'nope.pem');
    expect(problems({ COUNTERSIGN_SIGNING_KEY_FILE: missing })).toEqual([
      `COUNTERSIGN_SIGNING_KEY_FILE: cannot read ${missing} (ENOENT: no such file or directory): check the path (a relative path starts from the directory Countersign runs in)`,
    ]);
    expect(problems({ COUNTERSIGN_SIGNING_KEY_FILE: dir })).toEqual([
      `COUNTERSIGN_SIGNING_KEY_FILE: cannot read ${dir} (EISDIR: illegal operation on a directory): it is a directory; give the path of the file`,
    ]);
    const denied = Object.assign(new Error("EACCES: permission denied, open '/srv/key.pem'"), {
      code: 'EACCES',
    });
    const throwing = () => {
      throw denied;
    };
    expect(problems({ COUNTERSIGN_SIGNING_KEY_FILE: '/srv/key.pem' }, throwing)).toEqual([
      'COUNTERSIGN_SIGNING_KEY_FILE: cannot read /srv/key.pem (EACCES: permission denied): make it readable by the user Countersign runs as',
    ]);
  });

  it('says when the value is not a PEM, or is a path in the wrong variable', () => {
    expect(problems({ COUNTERSIGN_SIGNING_KEY: 'hunter2' })).toEqual([
      'COUNTERSIGN_SIGNING_KEY is not a PEM private key: expected text starting with -----BEGIN PRIVATE KEY-----; generate one with `npm run keygen -- --out countersign-signing-key.pem`',
    ]);
    expect(problems({ COUNTERSIGN_SIGNING_KEY: '/etc/countersign/key.pem' })).toEqual([
      'COUNTERSIGN_SIGNING_KEY looks like a file path (/etc/countersign/key.pem): set COUNTERSIGN_SIGNING_KEY_FILE to it instead, or put the PEM itself in COUNTERSIGN_SIGNING_KEY',
    ]);
  });

  it.each([
    [
      'an RSA key (PKCS#8)',
      pem(rsa.privateKey),
      'is an RSA key; Countersign signs with Ed25519: generate one',
    ],
    [
      'an RSA key (PKCS#1)',
      rsa.privateKey.export({ format: 'pem', type: 'pkcs1' }).toString(),
      'is an RSA key; Countersign signs with Ed25519',
    ],
    [
      'a P-256 key',
      pem(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey),
      'is an EC key (P-256); Countersign signs with Ed25519',
    ],
    [
      'an Ed448 key',
      pem(generateKeyPairSync('ed448').privateKey),
      'is an Ed448 key; Countersign signs with Ed25519',
    ],
    ['a public key', pem(previous.publicKey), 'is a public key; Countersign needs the private key'],
    [
      'an encrypted key',
      previous.privateKey
        .export({ format: 'pem', type: 'pkcs8', cipher: 'aes-256-cbc', passphrase: 'pw' })
        .toString(),
      'is encrypted with a passphrase; Countersign reads an unencrypted PKCS#8 key',
    ],
    [
      'an OpenSSH key',
      '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n',
      'is an OpenSSH key; Countersign reads PKCS#8 PEM',
    ],
    [
      'a certificate',
      '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n',
      'is a CERTIFICATE, not a private key',
    ],
    [
      'a damaged PEM',
      current.pem.replace(/\n[A-Za-z0-9+/=]+\n/, '\nMC4CAQAw\n'),
      'holds a -----BEGIN PRIVATE KEY----- block that does not decode',
    ],
    [
      'two keys',
      `${current.pem}${pem(previous.privateKey)}`,
      'holds 2 PEM blocks (PRIVATE KEY, PRIVATE KEY)',
    ],
    [
      'the published test key',
      vectors.keys.current.privateKeyPem,
      'is the published test key from test/vectors/receipts.json: anyone can sign with it',
    ],
  ])('refuses %s, saying what it is', (_label, value, message) => {
    const [problem] = problems({ COUNTERSIGN_SIGNING_KEY: value });
    expect(problem).toContain(`COUNTERSIGN_SIGNING_KEY ${message}`);
  });

  it('names the file when the key in it is refused', () => {
    const path = file('rsa.pem', pem(rsa.privateKey));
    expect(problems({ COUNTERSIGN_SIGNING_KEY_FILE: path })[0]).toContain(
      `COUNTERSIGN_SIGNING_KEY_FILE (${path}) is an RSA key; Countersign signs with Ed25519`,
    );
  });
});

describe('loadSigningKeys: previous public keys', () => {
  const withPrevious = (text: string, name = 'previous.pem'): SigningKeyEnv => ({
    COUNTERSIGN_SIGNING_KEY: current.pem,
    COUNTERSIGN_PREVIOUS_PUBLIC_KEYS_FILE: file(name, text),
  });

  it('adds the PEM public keys in the file after the current key, in order', () => {
    expect(kids(withPrevious(`${pem(previous.publicKey)}\n${pem(older.publicKey)}`))).toEqual([
      current.kid,
      receiptKid(previous.publicKey),
      receiptKid(older.publicKey),
    ]);
  });

  it('keeps the current key once when the file lists it too', () => {
    const currentPublic = pem(createPublicKey(current.privateKey));
    expect(kids(withPrevious(`${currentPublic}${pem(previous.publicKey)}`))).toEqual([
      current.kid,
      receiptKid(previous.publicKey),
    ]);
  });

  it('reads a JWKS, as the previous deployment published it', () => {
    const jwks = JSON.stringify(jwksOf([previous.publicKey, older.publicKey]), null, 2);
    expect(kids(withPrevious(jwks, 'jwks.json'))).toEqual([
      current.kid,
      receiptKid(previous.publicKey),
      receiptKid(older.publicKey),
    ]);
  });

  it.each([
    ['nothing usable', 'just text', 'holds neither PEM public keys (-----BEGIN PUBLIC KEY-----) nor a JWKS'],
    ['a private key', pem(previous.privateKey), 'key 1 is a private key: keep only public keys here'],
    [
      'an RSA public key',
      `${pem(previous.publicKey)}${pem(rsa.publicKey)}`,
      'key 2 is an RSA key; receipts are',
    ],
    ['broken JSON', '{ "keys": [', 'is not valid JSON'],
    [
      'a JWKS with a wrong kid',
      JSON.stringify({ keys: [{ ...jwksOf([previous.publicKey]).keys[0], kid: 'old' }] }),
      `keys[0].kid: "old" is not the key's RFC 7638 thumbprint`,
    ],
  ])('refuses a file with %s, naming it', (_label, text, message) => {
    const env = withPrevious(text, 'refused.pem');
    const [problem] = problems(env);
    expect(problem).toContain(
      `COUNTERSIGN_PREVIOUS_PUBLIC_KEYS_FILE (${env.COUNTERSIGN_PREVIOUS_PUBLIC_KEYS_FILE})`,
    );
    expect(problem).toContain(message);
  });

  it('reports problems with both the current key and the previous keys at once', () => {
    const missing = join(dir, 'missing-previous.pem');
    const found = problems({ COUNTERSIGN_PREVIOUS_PUBLIC_KEYS_FILE: missing });
    expect(found).toHaveLength(2);
    expect(found[0]).toMatch(/^COUNTERSIGN_SIGNING_KEY is not set/);
    expect(found[1]).toContain(`COUNTERSIGN_PREVIOUS_PUBLIC_KEYS_FILE: cannot read ${missing} (ENOENT`);
  });
});

describe('the environment', () => {
  it('passes the signing variables through readEnv, so its result can be loaded', () => {
    const env = readEnv({ COUNTERSIGN_SIGNING_KEY: current.pem.replaceAll('\n', '\\n') });
    if (!env.ok) throw new Error(env.problems.join('\n'));
    expect(kids(env.env)).toEqual([current.kid]);
  });

  it('still starts without them', () => {
    const env = readEnv({});
    expect(env.ok).toBe(true);
    if (env.ok) expect(env.env.COUNTERSIGN_SIGNING_KEY).toBeUndefined();
  });
});

describe('generateSigningKey', () => {
  it('makes a fresh Ed25519 key, its PKCS#8 PEM and its kid', () => {
    const key = generateSigningKey();
    expect(key.privateKey.asymmetricKeyType).toBe('ed25519');
    expect(key.pem).toMatch(/^-----BEGIN PRIVATE KEY-----\n[A-Za-z0-9+/=\n]+-----END PRIVATE KEY-----\n$/);
    expect(key.kid).toBe(receiptKid(key.privateKey));
    expect(kids({ COUNTERSIGN_SIGNING_KEY: key.pem })).toEqual([key.kid]);
    expect(generateSigningKey().kid).not.toBe(key.kid);
  });
});
