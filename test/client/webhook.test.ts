/**
 * verifyWebhook: a decision Countersign POSTs to the agent is signed like the agent's own requests,
 * with the agent's secret, and carries a delivery id to dedupe on.
 */
import { describe, expect, it } from 'vitest';
import { freightSteps } from '../../examples/freight/plans.ts';
import { verifyWebhook } from '../../src/client/index.ts';
import { generateSigningKey } from '../../src/config/signing-key.ts';
import { createReceiptSigner } from '../../src/pipeline/index.ts';
import { AUTH_HEADERS, signedHeaders } from '../../src/protocol/index.ts';
import { AGENT, makeDecision, OTHER_AGENT, SECRET } from './fake-countersign.ts';

const signer = createReceiptSigner(generateSigningKey().privateKey);
const steps = freightSteps.map((step) => ({ ...step, args: { ...step.args } }));
const decisionFor = (agent: string) =>
  makeDecision({ runId: 'run-1', agent, expiresAt: '2099-01-01T00:00:00Z', steps, signer });
const PATH = '/hooks/countersign?source=prod';
const NOW = Date.parse('2026-04-02T10:00:00Z');

/** A delivery as Countersign sends it. */
function delivery(options: { body?: string; secret?: string; now?: number; path?: string } = {}) {
  const body = options.body ?? JSON.stringify(decisionFor(AGENT));
  const headers: Record<string, string> = {
    ...signedHeaders({
      secret: options.secret ?? SECRET,
      agent: AGENT,
      method: 'POST',
      pathWithQuery: options.path ?? PATH,
      body,
      now: options.now ?? NOW,
    }),
    [AUTH_HEADERS.delivery]: 'dlv_01',
  };
  return { agent: AGENT, secret: SECRET, method: 'POST', pathWithQuery: PATH, headers, body, now: NOW };
}

describe('verifyWebhook', () => {
  it('accepts Countersign’s delivery: the decision and the delivery id, headers from Node or fetch', () => {
    const input = delivery();
    expect(verifyWebhook(input)).toMatchObject({
      ok: true,
      deliveryId: 'dlv_01',
      decision: { runId: 'run-1' },
    });
    const upper = Object.fromEntries(Object.entries(input.headers).map(([k, v]) => [k.toUpperCase(), v]));
    expect(verifyWebhook({ ...input, headers: upper }).ok).toBe(true);
    expect(verifyWebhook({ ...input, headers: new Headers(input.headers) }).ok).toBe(true);
  });

  it('refuses another secret, another path, a changed body and an old timestamp', () => {
    expect(verifyWebhook({ ...delivery({ secret: 'another-secret-0123456789' }) })).toMatchObject({
      ok: false,
      reason: 'bad_signature',
    });
    expect(verifyWebhook({ ...delivery(), pathWithQuery: '/hooks/countersign' })).toMatchObject({
      ok: false,
      reason: 'bad_signature',
    });
    const input = delivery();
    expect(verifyWebhook({ ...input, body: input.body.replace('run-1', 'run-2') })).toMatchObject({
      ok: false,
      reason: 'bad_signature',
    });
    expect(verifyWebhook({ ...delivery({ now: NOW - 6 * 60_000 }) })).toMatchObject({
      ok: false,
      reason: 'stale_timestamp',
    });
  });

  it('refuses a delivery without a delivery id, a body that is not a decision, and another agent’s decision', () => {
    const input = delivery();
    const { [AUTH_HEADERS.delivery]: _dropped, ...unmarked } = input.headers;
    expect(verifyWebhook({ ...input, headers: unmarked })).toMatchObject({
      ok: false,
      reason: 'missing_delivery',
    });
    expect(verifyWebhook(delivery({ body: '{"hello":1}' }))).toMatchObject({
      ok: false,
      reason: 'not_a_decision',
    });
    expect(verifyWebhook(delivery({ body: JSON.stringify(decisionFor(OTHER_AGENT)) }))).toMatchObject({
      ok: false,
      reason: 'wrong_agent',
    });
  });
});
