/**
 * How agents and Countersign authenticate each other over HTTP (docs/http-api.md): three headers, an
 * HMAC-SHA256 with the agent's secret over `v1:<timestamp>:<METHOD>:<path-with-query>:<raw body>`,
 * and timestamps within 5 minutes. Agents sign their requests; Countersign signs its webhooks the
 * same way. Pure.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const AUTH_HEADERS = {
  agent: 'x-countersign-agent',
  timestamp: 'x-countersign-timestamp',
  signature: 'x-countersign-signature',
  /** Webhooks only: the idempotency key of one delivery. */
  delivery: 'x-countersign-delivery',
} as const;

/** How far a timestamp may be from the receiver's clock, either way. */
export const MAX_CLOCK_SKEW_SECONDS = 300;

/** The exact bytes the signature covers. */
export function signingText(input: {
  readonly timestamp: string;
  readonly method: string;
  readonly pathWithQuery: string;
  readonly body: string;
}): string {
  return `v1:${input.timestamp}:${input.method.toUpperCase()}:${input.pathWithQuery}:${input.body}`;
}

/** `v1=<hex>` for a request. */
export function requestSignature(secret: string, input: Parameters<typeof signingText>[0]): string {
  return `v1=${createHmac('sha256', secret).update(signingText(input), 'utf8').digest('hex')}`;
}

/**
 * The three headers of a signed request.
 * @example
 * const headers = signedHeaders({ secret, agent: 'freight-ops', method: 'POST', pathWithQuery: '/v1/runs', body, now: Date.now() });
 */
export function signedHeaders(input: {
  readonly secret: string;
  readonly agent: string;
  readonly method: string;
  readonly pathWithQuery: string;
  readonly body: string;
  /** Milliseconds since the epoch. */
  readonly now: number;
}): Record<string, string> {
  const timestamp = String(Math.floor(input.now / 1000));
  return {
    [AUTH_HEADERS.agent]: input.agent,
    [AUTH_HEADERS.timestamp]: timestamp,
    [AUTH_HEADERS.signature]: requestSignature(input.secret, { ...input, timestamp }),
  };
}

export type AuthRefusal = 'missing_auth' | 'unknown_agent' | 'stale_timestamp' | 'bad_signature';

export type AuthCheck =
  | { readonly ok: true; readonly agent: string }
  | { readonly ok: false; readonly reason: AuthRefusal; readonly message: string };

/**
 * Checks a signed request: the headers are there, the agent is known, the timestamp is within 5
 * minutes of `now`, and the signature matches (compared in constant time).
 */
export function verifySignedRequest(input: {
  readonly header: (name: string) => string | undefined;
  readonly method: string;
  readonly pathWithQuery: string;
  readonly body: string;
  /** Milliseconds since the epoch. */
  readonly now: number;
  /** The agent's secret, or undefined for an agent not configured. */
  readonly secretOf: (agent: string) => string | undefined;
}): AuthCheck {
  const agent = input.header(AUTH_HEADERS.agent);
  const timestamp = input.header(AUTH_HEADERS.timestamp);
  const signature = input.header(AUTH_HEADERS.signature);
  if (agent === undefined || timestamp === undefined || signature === undefined) {
    return {
      ok: false,
      reason: 'missing_auth',
      message: `sign the request: ${Object.values(AUTH_HEADERS).slice(0, 3).join(', ')} are required`,
    };
  }
  const secret = input.secretOf(agent);
  if (secret === undefined)
    return { ok: false, reason: 'unknown_agent', message: 'unknown agent or bad signature' };
  const seconds = /^\d{1,12}$/.test(timestamp) ? Number(timestamp) : Number.NaN;
  if (!Number.isFinite(seconds) || Math.abs(input.now / 1000 - seconds) > MAX_CLOCK_SKEW_SECONDS) {
    return {
      ok: false,
      reason: 'stale_timestamp',
      message: `${AUTH_HEADERS.timestamp} must be unix seconds within ${MAX_CLOCK_SKEW_SECONDS / 60} minutes of the server's clock`,
    };
  }
  const expected = requestSignature(secret, { ...input, timestamp });
  const given = Buffer.from(signature);
  const wanted = Buffer.from(expected);
  if (given.length !== wanted.length || !timingSafeEqual(given, wanted)) {
    // Same words as an unknown agent: a caller learns nothing about which agents exist.
    return { ok: false, reason: 'bad_signature', message: 'unknown agent or bad signature' };
  }
  return { ok: true, agent };
}
