/**
 * Checking a webhook Countersign delivered (docs/http-api.md, Webhooks): it is signed like an agent's
 * request, with the agent's secret, over `POST`, the path and query it was sent to, and the raw body.
 */
import type { Decision } from '../pipeline/index.ts';
import { AUTH_HEADERS, type AuthRefusal, verifySignedRequest } from '../protocol/index.ts';
import { parseDecision } from './wire-read.ts';

/** Request headers as Node (`req.headers`) or fetch (`Headers`) give them. */
export type HeaderSource =
  | { get(name: string): string | null }
  | Readonly<Record<string, string | readonly string[] | undefined>>;

export type WebhookCheck =
  | {
      readonly ok: true;
      /** `X-Countersign-Delivery`: the same for every retry of one delivery. Dedupe on it (and on the run id). */
      readonly deliveryId: string;
      /** Shape-checked only: `verifyStep` verifies its receipt before each effect. */
      readonly decision: Decision;
    }
  | {
      readonly ok: false;
      readonly reason: AuthRefusal | 'missing_delivery' | 'not_a_decision' | 'wrong_agent';
      readonly message: string;
    };

/**
 * Whether a webhook request is Countersign's, for this agent: signature, timestamp within 5 minutes,
 * a delivery id, and a body that is one of this agent's decisions. Answer 2xx only after handling it
 * (or queueing it durably); anything else makes Countersign deliver it again.
 * @example
 * const check = verifyWebhook({ agent: 'freight-ops', secret, method: req.method, pathWithQuery: req.url, headers: req.headers, body });
 * if (!check.ok) return res.writeHead(401).end();
 * if (!(await seen(check.deliveryId))) await handle(check.decision);
 * res.writeHead(204).end();
 */
export function verifyWebhook(input: {
  readonly agent: string;
  readonly secret: string;
  /** The request's method (Countersign sends `POST`). */
  readonly method: string;
  /** The request target exactly as received (`req.url` in Node): path and query, undecoded. */
  readonly pathWithQuery: string;
  readonly headers: HeaderSource;
  /** The raw body, as received: parse it only after it verifies. */
  readonly body: string;
  /** Milliseconds since the epoch (default `Date.now()`). */
  readonly now?: number;
}): WebhookCheck {
  const header = headerReader(input.headers);
  const auth = verifySignedRequest({
    header,
    method: input.method,
    pathWithQuery: input.pathWithQuery,
    body: input.body,
    now: input.now ?? Date.now(),
    secretOf: (agent) => (agent === input.agent ? input.secret : undefined),
  });
  if (!auth.ok) return auth;
  const deliveryId = header(AUTH_HEADERS.delivery);
  if (deliveryId === undefined || deliveryId === '') {
    return { ok: false, reason: 'missing_delivery', message: `${AUTH_HEADERS.delivery} is missing` };
  }
  let decision: Decision;
  try {
    decision = parseDecision(JSON.parse(input.body));
  } catch (error) {
    return {
      ok: false,
      reason: 'not_a_decision',
      message: `the body is not a decision: ${error instanceof Error ? error.message.slice(0, 300) : String(error)}`,
    };
  }
  if (decision.agent !== input.agent) {
    return {
      ok: false,
      reason: 'wrong_agent',
      message: `the decision is for agent ${JSON.stringify(decision.agent)}, not ${JSON.stringify(input.agent)}`,
    };
  }
  return { ok: true, deliveryId, decision };
}

function headerReader(headers: HeaderSource): (name: string) => string | undefined {
  if (typeof headers.get === 'function') {
    const source = headers as { get(name: string): string | null };
    return (name) => source.get(name) ?? undefined;
  }
  const record = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  const lower = new Map(Object.entries(record).map(([key, value]) => [key.toLowerCase(), value]));
  return (name) => {
    const value = lower.get(name.toLowerCase());
    // A header sent twice is not one we signed: refuse it rather than pick one.
    return typeof value === 'string' ? value : undefined;
  };
}
