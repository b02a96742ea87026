/**
 * What the integration tests share: the freight agent's secret, Countersign's test signing key (a
 * fixed one, so child processes sign with the same key as the test that reads their decisions), unique
 * key prefixes, polling, and an approvals service on the harness's Redis.
 */
import { createHash, createPrivateKey, type KeyObject, randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { FREIGHT_AGENT } from '../../examples/freight/plans.ts';
import { ApprovalService, type ApprovalServiceOptions } from '../../src/approvals/index.ts';
import { createReceiptSigner, jwksOf, type ReceiptSigner } from '../../src/pipeline/index.ts';
import { createRedisConnection } from '../../src/queue/index.ts';
import { deleteKeysUnder, redisUrl } from '../helpers/redis.ts';
import { freightConfig } from './freight.ts';

export const FREIGHT_SECRET = 'freight-test-secret-0123456789';
export const freightSecrets = (agent: string) => (agent === FREIGHT_AGENT ? FREIGHT_SECRET : undefined);

/** An Ed25519 key from a fixed seed (PKCS#8 DER: a fixed 16-byte header, then the 32-byte seed). */
function keyFromSeed(text: string): KeyObject {
  const seed = createHash('sha256').update(text).digest();
  const der = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]);
  return createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
}

const TEST_KEY = keyFromSeed('countersign test signing key');

/** The test signing key as a PKCS#8 PEM (what COUNTERSIGN_SIGNING_KEY would hold): logs must never show it. */
export const TEST_SIGNING_KEY_PEM = TEST_KEY.export({ format: 'pem', type: 'pkcs8' }).toString();

/** Countersign's signing key in tests, and the JWKS that verifies it. */
export const testSigning: {
  readonly signer: ReceiptSigner;
  readonly publicKeys: readonly KeyObject[];
  readonly jwks: ReturnType<typeof jwksOf>;
} = (() => {
  const signer = createReceiptSigner(TEST_KEY);
  return { signer, publicKeys: [signer.publicKey], jwks: jwksOf([signer.publicKey]) };
})();

/** Another key, for forged receipts and rotation. */
export const otherSigner: ReceiptSigner = createReceiptSigner(keyFromSeed('some other key'));

/** A key prefix createKeys accepts (no `:`), unique per call: `t-<name>-<8 hex>`. */
export function stackPrefix(name: string): string {
  return `t-${name.replace(/[^A-Za-z0-9_-]+/g, '-').slice(0, 20)}-${randomBytes(4).toString('hex')}`;
}

/** Polls `read` until it returns something other than undefined, or fails after `timeoutMs`. */
export async function eventually<T>(
  read: () => Promise<T | undefined>,
  timeoutMs = 10_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

export interface ServiceStack {
  readonly url: string;
  readonly prefix: string;
  readonly redis: Redis;
  readonly service: ApprovalService;
  cleanup(): Promise<void>;
}

/** The approvals service with the freight config under a prefix of its own; `cleanup` deletes its keys. */
export function serviceStack(name: string, options: Partial<ApprovalServiceOptions> = {}): ServiceStack {
  const url = redisUrl();
  const prefix = stackPrefix(name);
  const redis = createRedisConnection(url, { role: 'client' });
  const service = new ApprovalService({
    redis,
    config: freightConfig,
    signer: testSigning.signer,
    prefix,
    ...options,
  });
  return {
    url,
    prefix,
    redis,
    service,
    async cleanup() {
      const admin = new Redis(url);
      try {
        await deleteKeysUnder(admin, prefix);
      } finally {
        admin.disconnect();
        await redis.quit();
      }
    },
  };
}
