/**
 * The agent gateway, black box: real HTTP to the real server (startCountersign with the Slack
 * stand-in and real Redis), requests signed as docs/http-api.md says — every endpoint, and every
 * refusal the issue names.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freightConfigInput } from '../../examples/freight/countersign.config.ts';
import { FREIGHT_AGENT, freightContext, freightSteps, freightSummary } from '../../examples/freight/plans.ts';
import { defineConfig } from '../../src/config/index.ts';
import { type Decision, keysFromJwks, verifyDecisionStep } from '../../src/pipeline/index.ts';
import { PATHS } from '../../src/protocol/index.ts';
import { type BotStack, botStack } from '../support/bot-stack.ts';
import { FREIGHT_SECRET } from '../support/stack.ts';

const BILLING_SECRET = 'billing-test-secret-0123456789';
/** The freight example plus a second agent, whose runs the freight agent must not see. */
const config = defineConfig({
  ...freightConfigInput,
  agents: {
    // A rate high enough for a thousand long polls at once (the limit itself: webhooks-and-limits.test.ts).
    [FREIGHT_AGENT]: {
      ...freightConfigInput.agents[FREIGHT_AGENT]!,
      rateLimit: { requests: 100_000, per: '1m' },
    },
    billing: { tools: ['add_note'], channel: 'C0OPS', secret: BILLING_SECRET },
  },
  policy: [
    {
      name: 'disputed-invoice',
      tool: 'issue_refund',
      when: (args) => args.invoice_id === 'in_74120',
      route: 'block',
      reason: 'invoice in_74120 is disputed: refunds go through the finance system',
    },
    ...freightConfigInput.policy,
  ],
});

let stack: BotStack;
beforeAll(async () => {
  stack = await botStack('gateway', { config, secrets: { billing: BILLING_SECRET } });
});
afterAll(() => stack.stop());

const steps = () => freightSteps.map((step) => ({ ...step, args: { ...step.args } }));
const planBody = (overrides: Record<string, unknown> = {}) =>
  JSON.stringify({
    runId: randomUUID(),
    agent: FREIGHT_AGENT,
    summary: freightSummary,
    context: freightContext,
    expiresIn: '2h',
    steps: steps(),
    ...overrides,
  });
const runIdOf = (body: string) => (JSON.parse(body) as { runId: string }).runId;
const errorCode = (body: unknown) => (body as { error?: { code?: string } }).error?.code;

describe('POST /v1/runs', () => {
  it('validates before answering, stores v1 pending, and answers the same body again the same way', async () => {
    const body = planBody();
    const first = await stack.agentRequest('POST', PATHS.runs, body);
    expect(first).toMatchObject({
      status: 202,
      body: { runId: runIdOf(body), status: 'pending', version: 1 },
    });
    const again = await stack.agentRequest('POST', PATHS.runs, body);
    expect(again.status).toBe(202);
    expect(again.body).toEqual(first.body);
    await stack.card(runIdOf(body));
  });

  it('refuses other text under the same run id with 409, and answers an all-automatic plan approved', async () => {
    const body = planBody();
    await stack.agentRequest('POST', PATHS.runs, body);
    const other = await stack.agentRequest(
      'POST',
      PATHS.runs,
      planBody({ runId: runIdOf(body), summary: 'other' }),
    );
    expect(other.status).toBe(409);
    expect(errorCode(other.body)).toBe('run_exists');
    const auto = planBody({ steps: [steps()[0]] });
    expect(await stack.agentRequest('POST', PATHS.runs, auto)).toMatchObject({
      status: 202,
      body: { status: 'approved', version: 1 },
    });
  });

  it('answers 422 with the phase and diagnostics of an invalid plan, and the same again', async () => {
    const body = planBody({ steps: [{ tool: 'delete_account', args: {} }] });
    const answer = await stack.agentRequest('POST', PATHS.runs, body);
    expect(answer.status).toBe(422);
    expect(answer.body).toMatchObject({ runId: runIdOf(body), status: 'invalid', phase: 'resolve' });
    expect((answer.body as { diagnostics: { code: string }[] }).diagnostics.map((d) => d.code)).toEqual([
      'unknown_tool',
    ]);
    expect((await stack.agentRequest('POST', PATHS.runs, body)).body).toEqual(answer.body);
  });

  it('refuses a plan with a blocked step when it asks ifBlocked "refuse": 422 at authorize, journaled invalid, no card', async () => {
    const huge = { id: 's9', tool: 'issue_refund', args: { invoice_id: 'in_74120', amount: 1_000 } };
    const refused = planBody({ steps: [...steps(), huge], ifBlocked: 'refuse' });
    const answer = await stack.agentRequest('POST', PATHS.runs, refused);
    expect(answer).toMatchObject({
      status: 422,
      body: { runId: runIdOf(refused), status: 'invalid', phase: 'authorize' },
    });
    expect((answer.body as { diagnostics: unknown[] }).diagnostics).toEqual([
      {
        phase: 'authorize',
        code: 'blocked',
        stepId: 's9',
        message: 'step s9: invoice in_74120 is disputed: refunds go through the finance system',
      },
    ]);
    const status = await stack.agentRequest('GET', PATHS.run(runIdOf(refused)), '');
    expect(status.body).toMatchObject({ status: 'invalid', version: null });
    const { Redis } = await import('ioredis');
    const { redisUrl } = await import('../helpers/redis.ts');
    const redis = new Redis(redisUrl());
    try {
      const journal = await redis.lrange(
        stack.countersign.approvals.keys.forRun(runIdOf(refused)).journal,
        0,
        -1,
      );
      expect(journal.map((entry) => (JSON.parse(entry) as { event: { type: string } }).event.type)).toEqual([
        'submitted',
        'invalid',
      ]);
    } finally {
      redis.disconnect();
    }

    // The default, "review", posts it: people see what the agent tried.
    const reviewed = planBody({ steps: [...steps(), huge] });
    expect(await stack.agentRequest('POST', PATHS.runs, reviewed)).toMatchObject({
      status: 202,
      body: { status: 'pending' },
    });
    await stack.card(runIdOf(reviewed));
    await stack.rendered(runIdOf(reviewed));
    expect(stack.cards().filter((message) => JSON.stringify(message).includes(runIdOf(refused)))).toEqual([]);
  });

  it('answers 422 with no run id for text that is not a plan, and stores nothing', async () => {
    const answer = await stack.agentRequest('POST', PATHS.runs, '{"runId": "a", "runId": "b"}');
    expect(answer).toMatchObject({ status: 422, body: { runId: null, status: 'invalid', phase: 'parse' } });
    expect((answer.body as { diagnostics: { code: string }[] }).diagnostics[0]?.code).toBe('duplicate_key');
  });

  it('refuses a plan naming another agent than the one that signed it', async () => {
    const note = { tool: 'add_note', args: { ticket_id: '1', note: 'n' } };
    const answer = await stack.agentRequest(
      'POST',
      PATHS.runs,
      planBody({ agent: 'billing', steps: [note] }),
    );
    expect(answer.status).toBe(422);
    expect(JSON.stringify(answer.body)).toContain('does not match the signed submission');
  });

  it('refuses a body over the size limit with 413, before reading it all', async () => {
    const huge = planBody({ summary: 'x'.repeat(400 * 1024) });
    const answer = await stack.agentRequest('POST', PATHS.runs, huge);
    expect(answer.status).toBe(413);
    expect(errorCode(answer.body)).toBe('too_large');
  });
});

describe('authentication', () => {
  const path = PATHS.runs;
  const refused = async (answer: Promise<{ status: number; body: unknown }>) => {
    const { status, body } = await answer;
    expect(status).toBe(401);
    expect(errorCode(body)).toBe('unauthorized');
  };

  it('refuses a request without the signature headers', async () => {
    const response = await fetch(`${stack.baseUrl}${path}`, { method: 'POST', body: planBody() });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ error: { code: 'unauthorized' } });
  });

  it('refuses a wrong secret, an unknown agent, and a tampered body, all with the same words', async () => {
    const body = planBody();
    const wrong = await stack.agentRequest('POST', path, body, { secret: 'not-the-secret-at-all-0000' });
    const unknown = await stack.agentRequest('POST', path, body, { agent: 'nobody', secret: FREIGHT_SECRET });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body).toEqual(unknown.body);
  });

  it('refuses timestamps more than 5 minutes in the past or the future', async () => {
    await refused(stack.agentRequest('POST', path, planBody(), { now: Date.now() - 6 * 60_000 }));
    await refused(stack.agentRequest('POST', path, planBody(), { now: Date.now() + 6 * 60_000 }));
    // Within the window either way: accepted.
    expect(
      (await stack.agentRequest('POST', path, planBody(), { now: Date.now() - 4 * 60_000 })).status,
    ).toBe(202);
  });

  it('refuses a signature made for one path replayed on another', async () => {
    const body = planBody();
    await stack.agentRequest('POST', PATHS.runs, body);
    const runId = runIdOf(body);
    // Signed for GET /v1/runs/<id>, sent to GET /v1/runs/<id>/decision.
    const { signedHeaders } = await import('../../src/protocol/index.ts');
    const headers = signedHeaders({
      secret: FREIGHT_SECRET,
      agent: FREIGHT_AGENT,
      method: 'GET',
      pathWithQuery: PATHS.run(runId),
      body: '',
      now: Date.now(),
    });
    const ok = await fetch(`${stack.baseUrl}${PATHS.run(runId)}`, { headers });
    expect(ok.status).toBe(200);
    const replayed = await fetch(`${stack.baseUrl}${PATHS.decision(runId)}`, { headers });
    expect(replayed.status).toBe(401);
  });

  it('lets a flood of replays grow no journal: the same signed submission again is answered, not stored', async () => {
    const body = planBody();
    await stack.agentRequest('POST', PATHS.runs, body);
    const runId = runIdOf(body);
    await stack.rendered(runId); // the card's `posted` entry is journaled by the rendering
    const journal = () => stack.countersign.approvals.keys.forRun(runId).journal;
    const { Redis } = await import('ioredis');
    const { redisUrl } = await import('../helpers/redis.ts');
    const redis = new Redis(redisUrl());
    try {
      const before = await redis.llen(journal());
      await Promise.all(Array.from({ length: 50 }, () => stack.agentRequest('POST', PATHS.runs, body)));
      expect(await redis.llen(journal())).toBe(before);
    } finally {
      redis.disconnect();
    }
  });

  it('counts refusals in /metrics', async () => {
    const metrics = await (await fetch(`${stack.baseUrl}/metrics`)).text();
    expect(metrics).toMatch(/countersign_gateway_refusals_total\{reason="bad_signature"\} [1-9]/);
    expect(metrics).toMatch(/countersign_gateway_refusals_total\{reason="stale_timestamp"\} [1-9]/);
    expect(metrics).toMatch(/countersign_gateway_refusals_total\{reason="too_large"\} [1-9]/);
  });
});

describe('reading runs and decisions', () => {
  it('shows a run’s status, digests and the steps awaiting approval; another agent’s run is not found', async () => {
    const body = planBody();
    await stack.agentRequest('POST', PATHS.runs, body);
    const runId = runIdOf(body);
    const status = await stack.agentRequest('GET', PATHS.run(runId));
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({
      runId,
      agent: FREIGHT_AGENT,
      status: 'pending',
      version: 1,
      awaiting: [
        { stepId: 's2', group: 'operators', have: 0, need: 1 },
        { stepId: 's3', group: 'operators', have: 0, need: 1 },
      ],
    });
    expect(
      (status.body as { steps: { digest: string }[] }).steps.every((s) => /^[0-9a-f]{64}$/.test(s.digest)),
    ).toBe(true);
    const asBilling = { agent: 'billing', secret: BILLING_SECRET };
    const foreign = await stack.agentRequest('GET', PATHS.run(runId), '', asBilling);
    const unknown = await stack.agentRequest('GET', PATHS.run('no-such-run'), '', asBilling);
    expect(foreign.status).toBe(404);
    expect(unknown.status).toBe(404);
    expect(errorCode(foreign.body)).toBe('not_found');
    expect((await stack.agentRequest('GET', PATHS.decision(runId), '', asBilling)).status).toBe(404);
  });

  it('long-polls a decision: 202 pending when the wait ends, 200 with a receipt the JWKS verifies once decided', async () => {
    const body = planBody();
    await stack.agentRequest('POST', PATHS.runs, body);
    const runId = runIdOf(body);
    expect(await stack.agentRequest('GET', PATHS.decision(runId, 0))).toMatchObject({
      status: 202,
      body: { runId, status: 'pending' },
    });
    const card = await stack.card(runId);
    const started = Date.now();
    const polled = stack.agentRequest('GET', PATHS.decision(runId, 30));
    await new Promise((resolve) => setTimeout(resolve, 200));
    await stack.click('U0OP1', card, 'approve');
    const answer = await polled;
    expect(answer.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(5_000);
    const jwks = (await (await fetch(`${stack.baseUrl}${PATHS.jwks}`)).json()) as unknown;
    const keys = keysFromJwks(jwks);
    if (!keys.ok) throw new Error(keys.message);
    const decision = answer.body as Decision;
    expect(decision.status).toBe('approved');
    for (const step of decision.plan!.steps) {
      expect(verifyDecisionStep(decision, step, keys.keys, Date.now())).toMatchObject({ ok: true });
    }
  });

  it('refuses a wait that is not 0 to 60 seconds', async () => {
    const answer = await stack.agentRequest('GET', '/v1/runs/any/decision?wait=61');
    expect(answer.status).toBe(400);
    expect(errorCode(answer.body)).toBe('invalid_request');
  });

  it('feeds the agent’s decisions with a cursor, and wakes a long poll on a new one', async () => {
    const first = await stack.agentRequest('GET', PATHS.decisions(undefined, 0));
    expect(first.status).toBe(200);
    const cursor = (first.body as { cursor: string }).cursor;
    const polled = stack.agentRequest('GET', PATHS.decisions(cursor, 30));
    const body = planBody({ steps: [steps()[0]] }); // all automatic: decided at once
    await stack.agentRequest('POST', PATHS.runs, body);
    const answer = await polled;
    expect(answer.status).toBe(200);
    const feed = answer.body as {
      decisions: { cursor: string; decision: { runId: string } }[];
      cursor: string;
    };
    expect(feed.decisions.map((entry) => entry.decision.runId)).toContain(runIdOf(body));
    const after = await stack.agentRequest('GET', PATHS.decisions(feed.cursor, 0));
    expect((after.body as { decisions: unknown[] }).decisions).toEqual([]);
  });
});

describe('reporting outcomes', () => {
  it('claims a step with applying once, records applied, and refuses what may not be reported', async () => {
    const body = planBody();
    await stack.agentRequest('POST', PATHS.runs, body);
    const runId = runIdOf(body);
    const report = (stepId: string, status: string) =>
      stack.agentRequest('POST', PATHS.outcome(runId, stepId), JSON.stringify({ status }));
    const early = await report('s1', 'applying');
    expect(early.status).toBe(409);
    expect(errorCode(early.body)).toBe('not_approved');
    await stack.click('U0OP1', await stack.card(runId), 'approve');
    await waitForStatus(runId, 'approved');
    expect(await report('s1', 'applying')).toMatchObject({
      status: 200,
      body: { runId, stepId: 's1', status: 'applying' },
    });
    const twice = await report('s1', 'applying');
    expect(twice.status).toBe(409);
    expect(errorCode(twice.body)).toBe('already_claimed');
    expect((await report('s1', 'applied')).status).toBe(200);
    expect((await report('s1', 'failed')).status).toBe(409);
    expect((await report('s9', 'applying')).status).toBe(404);
    const bad = await stack.agentRequest('POST', PATHS.outcome(runId, 's2'), '{"status":"done"}');
    expect(bad.status).toBe(400);
    expect(errorCode(bad.body)).toBe('invalid_request');
  });

  it('keeps named numbers with an outcome, in the answer and the journal, and refuses fractions and odd names', async () => {
    const body = planBody();
    await stack.agentRequest('POST', PATHS.runs, body);
    const runId = runIdOf(body);
    await stack.click('U0OP1', await stack.card(runId), 'approve');
    await waitForStatus(runId, 'approved');
    const report = (outcome: object) =>
      stack.agentRequest('POST', PATHS.outcome(runId, 's2'), JSON.stringify(outcome));
    for (const [metrics, says] of [
      [{ refund: 14.5 }, 'whole number'],
      [{ 'Refund Cents': 1 }, 'metric name'],
      [Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`m${i}`, i])), 'at most 20'],
    ] as const) {
      const refused = await report({ status: 'applied', metrics });
      expect(refused.status).toBe(400);
      expect(JSON.stringify(refused.body)).toContain(says);
    }
    const recorded = await report({ status: 'applied', metrics: { refund_cents: 148_900, items: 2 } });
    expect(recorded).toMatchObject({
      status: 200,
      body: { stepId: 's2', status: 'applied', metrics: { refund_cents: 148_900, items: 2 } },
    });
    const { Redis } = await import('ioredis');
    const { redisUrl } = await import('../helpers/redis.ts');
    const redis = new Redis(redisUrl());
    try {
      const journal = (await redis.lrange(stack.countersign.approvals.keys.forRun(runId).journal, 0, -1)).map(
        (text) => JSON.parse(text) as { event: { type: string } },
      );
      expect(journal.filter((r) => r.event.type === 'outcome').map((r) => r.event)).toEqual([
        { type: 'outcome', stepId: 's2', status: 'applied', metrics: { items: 2, refund_cents: 148_900 } },
      ]);
    } finally {
      redis.disconnect();
    }
  });
});

describe('discovery', () => {
  it('serves OpenAPI 3.1 generated from the wire schemas, and the JWKS, without signatures', async () => {
    const openapi = (await (await fetch(`${stack.baseUrl}${PATHS.openapi}`)).json()) as {
      openapi: string;
      paths: Record<string, unknown>;
      components: { schemas: Record<string, unknown> };
    };
    expect(openapi.openapi).toBe('3.1.0');
    expect(Object.keys(openapi.paths)).toEqual(
      expect.arrayContaining([
        '/v1/runs',
        '/v1/runs/{runId}',
        '/v1/runs/{runId}/decision',
        '/v1/runs/{runId}/steps/{stepId}/outcome',
        '/.well-known/jwks.json',
      ]),
    );
    expect(Object.keys(openapi.components.schemas)).toEqual(
      expect.arrayContaining(['PlanSubmission', 'Decision', 'Receipt', 'Diagnostic', 'Error']),
    );
    const jwks = (await (await fetch(`${stack.baseUrl}${PATHS.jwks}`)).json()) as {
      keys: { kty: string; kid: string }[];
    };
    expect(jwks.keys[0]).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA' });
  });

  it('answers an unknown endpoint 404 and a wrong method 405, in JSON', async () => {
    expect(await stack.agentRequest('GET', '/v1/nothing')).toMatchObject({
      status: 404,
      body: { error: { code: 'not_found' } },
    });
    const wrong = await stack.agentRequest('DELETE', PATHS.runs);
    expect(wrong).toMatchObject({ status: 405, body: { error: { code: 'method_not_allowed' } } });
  });
});

describe('many long polls', () => {
  it('answers 1,000 concurrent long polls, each with its run’s decision', async () => {
    const runs = await Promise.all(
      Array.from({ length: 100 }, async () => {
        const body = planBody();
        await stack.agentRequest('POST', PATHS.runs, body);
        return runIdOf(body);
      }),
    );
    const polls = runs.flatMap((runId) =>
      Array.from({ length: 10 }, () => stack.agentRequest('GET', PATHS.decision(runId, 60))),
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    await Promise.all(
      runs.map((runId) => stack.countersign.approvals.approve({ runId, version: 1, userId: 'U0OP1' })),
    );
    const answers = await Promise.all(polls);
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(1_000);
    expect(
      answers.every(
        (answer, index) => (answer.body as { runId: string }).runId === runs[Math.floor(index / 10)],
      ),
    ).toBe(true);
  }, 60_000);
});

async function waitForStatus(runId: string, status: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const answer = await stack.agentRequest('GET', PATHS.run(runId));
    if ((answer.body as { status: string }).status === status) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`run ${runId} never became ${status}`);
}
