/**
 * Decision webhooks (signed like agents' requests, retried, one delivery id per decision) and the
 * per-agent request rate, against the real server.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freightConfigInput } from '../../examples/freight/countersign.config.ts';
import { FREIGHT_AGENT, freightSteps } from '../../examples/freight/plans.ts';
import { defineConfig } from '../../src/config/index.ts';
import { generateSigningKey } from '../../src/config/signing-key.ts';
import {
  createReceiptSigner,
  type Decision,
  keysFromJwks,
  signDecision,
  verifyDecisionStep,
} from '../../src/pipeline/index.ts';
import { AUTH_HEADERS, PATHS, verifySignedRequest } from '../../src/protocol/index.ts';
import { type BotStack, botStack } from '../support/bot-stack.ts';
import { FREIGHT_SECRET, otherSigner, testSigning } from '../support/stack.ts';

interface Received {
  readonly delivery: string;
  readonly verified: boolean;
  readonly runId: string;
  readonly status: number;
}

/** A receiver that refuses the first two attempts of each delivery, then accepts; it checks signatures. */
function webhookReceiver(): { server: Server; received: Received[]; url: () => string } {
  const received: Received[] = [];
  const attempts = new Map<string, number>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const delivery = String(req.headers[AUTH_HEADERS.delivery] ?? '');
      const check = verifySignedRequest({
        header: (name) => {
          const value = req.headers[name];
          return Array.isArray(value) ? value[0] : value;
        },
        method: req.method ?? '',
        pathWithQuery: req.url ?? '',
        body,
        now: Date.now(),
        secretOf: (agent) => (agent === FREIGHT_AGENT ? FREIGHT_SECRET : undefined),
      });
      const attempt = (attempts.get(delivery) ?? 0) + 1;
      attempts.set(delivery, attempt);
      const status = attempt <= 2 ? 503 : 200;
      received.push({
        delivery,
        verified: check.ok,
        runId: (JSON.parse(body) as { runId: string }).runId,
        status,
      });
      res.writeHead(status).end();
    });
  });
  return {
    server,
    received,
    url: () => `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/countersign?team=ops`,
  };
}

const receiver = webhookReceiver();
let stack: BotStack;
beforeAll(async () => {
  await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
  const agent = freightConfigInput.agents[FREIGHT_AGENT]!;
  const config = defineConfig({
    ...freightConfigInput,
    agents: {
      [FREIGHT_AGENT]: { ...agent, webhook: { url: receiver.url() }, rateLimit: { requests: 30, per: '1m' } },
    },
  });
  // Rotated keys: decisions are signed with the test key; `otherSigner` was the key before it.
  stack = await botStack('webhooks', {
    config,
    webhookRetryDelayMs: 50,
    signing: {
      signer: testSigning.signer,
      publicKeys: [testSigning.signer.publicKey, otherSigner.publicKey],
    },
  });
});
afterAll(async () => {
  await stack.stop();
  await new Promise((resolve) => receiver.server.close(resolve));
});

describe('decision webhooks', () => {
  it('delivers a decision signed with the agent’s secret; a receiver failing twice gets it on the third attempt, under one delivery id', async () => {
    const runId = randomUUID();
    const body = JSON.stringify({ runId, agent: FREIGHT_AGENT, expiresIn: '1h', steps: [freightSteps[0]] });
    expect((await stack.agentRequest('POST', PATHS.runs, body)).status).toBe(202);
    const mine = await stack.until(() => {
      const found = receiver.received.filter((entry) => entry.runId === runId);
      return found.some((entry) => entry.status === 200) ? found : undefined;
    }, 15_000);
    expect(mine.map((entry) => entry.status)).toEqual([503, 503, 200]);
    expect(new Set(mine.map((entry) => entry.delivery))).toEqual(new Set([`webhook-${runId}`]));
    expect(mine.every((entry) => entry.verified)).toBe(true);
    // Delivered once: nothing more arrives for it.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(receiver.received.filter((entry) => entry.runId === runId)).toHaveLength(3);
    const metrics = await (await fetch(`${stack.baseUrl}/metrics`)).text();
    expect(metrics).toMatch(/countersign_webhook_attempts_total\{outcome="delivered"\} [1-9]/);
    expect(metrics).toMatch(/countersign_webhook_attempts_total\{outcome="refused"\} [2-9]/);
  });
});

describe('key rotation', () => {
  it('lists the current and the previous key in the JWKS; receipts of either verify, an unknown kid does not', async () => {
    const jwks = (await (await fetch(`${stack.baseUrl}${PATHS.jwks}`)).json()) as { keys: { kid: string }[] };
    expect(jwks.keys.map((key) => key.kid)).toEqual([testSigning.signer.kid, otherSigner.kid]);
    const keys = keysFromJwks(jwks);
    if (!keys.ok) throw new Error(keys.message);
    const runId = randomUUID();
    const body = JSON.stringify({ runId, agent: FREIGHT_AGENT, expiresIn: '1h', steps: [freightSteps[0]] });
    await stack.agentRequest('POST', PATHS.runs, body);
    const decision = (await stack.agentRequest('GET', PATHS.decision(runId, 10))).body as Decision;
    expect(decision.receipt.kid).toBe(testSigning.signer.kid);
    const { receipt: _receipt, ...unsigned } = decision;
    const step = decision.plan!.steps[0]!;
    const now = Date.now();
    // Signed before the rotation, with the previous key: still verifies.
    const before = signDecision(unsigned, otherSigner);
    expect(verifyDecisionStep(before, step, keys.keys, now)).toMatchObject({ ok: true });
    // A key nobody listed: refused.
    const stranger = signDecision(unsigned, createReceiptSigner(generateSigningKey().privateKey));
    expect(verifyDecisionStep(stranger, step, keys.keys, now)).toMatchObject({
      ok: false,
      reason: 'bad_receipt',
    });
  });
});

describe('the request rate', () => {
  it('answers 429 with Retry-After once an agent is over its rate, and counts it', async () => {
    const answers = [];
    for (let i = 0; i < 40; i++) answers.push(await stack.agentRequest('GET', PATHS.decisions(undefined, 0)));
    const limited = answers.filter((answer) => answer.status === 429);
    expect(limited.length).toBeGreaterThan(0);
    expect(Number(limited[0]?.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited[0]?.body).toMatchObject({ error: { code: 'rate_limited' } });
  });
});
