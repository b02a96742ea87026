import type { KeyObject } from 'node:crypto';
import { generateSigningKey } from '../src/config/signing-key.ts';
import { createReceiptSigner, type ReceiptSigner } from '../src/pipeline/index.ts';

/** A signing key made for one bench run (decisions are signed as in production: Ed25519). */
export function benchSigning(): { signer: ReceiptSigner; publicKeys: readonly KeyObject[] } {
  const signer = createReceiptSigner(generateSigningKey().privateKey);
  return { signer, publicKeys: [signer.publicKey] };
}
