import { createHmac, timingSafeEqual } from 'node:crypto';
import { canonicalJson } from './canonical-json.ts';
import type { JsonValue } from './json.ts';

/**
 * Lower-case hex HMAC-SHA256 of the canonical JSON of `value`. Agents and Countersign share one secret
 * per agent: submissions are signed with it and decisions carry a receipt signed with it.
 */
export function hmacHex(secret: string, value: JsonValue): string {
  return createHmac('sha256', secret).update(canonicalJson(value), 'utf8').digest('hex');
}

/** Constant-time comparison of two hex strings (false for different lengths or non-hex). */
export function hexEquals(a: string, b: string): boolean {
  if (a.length !== b.length || !/^[0-9a-f]*$/.test(a) || !/^[0-9a-f]*$/.test(b)) return false;
  return timingSafeEqual(Buffer.from(a, 'hex'), Buffer.from(b, 'hex'));
}
