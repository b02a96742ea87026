/**
 * AgentClient over HTTP, against a stand-in server that checks every signature with the protocol's
 * own verifier: signing, submit's answers, retries, long polls, outcomes and close.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freightContext, freightSteps, freightSummary } from '../../examples/freight/plans.ts';
import {
  AgentClient,
  type AgentClientOptions,
  isClientClosedError,
  isDecisionTimeoutError,
  isRequestError,
  isSubmissionError,
  isWaitAbortedError,
  type SubmissionError,
} from '../../src/client/index.ts';
import { requestSignature } from '../../src/protocol/index.ts';
import { AGENT, type FakeCountersign, SECRET, startFakeCountersign } from './fake-countersign.ts';

const steps = freightSteps.map((step) => ({ ...step, args: { ...step.args } }));
const plan = { summary: freightSummary, context: freightContext, steps, expiresIn: '2h' };

let server: FakeCountersign;
const clients: AgentClient[] = [];
const errors: unknown[] = [];

function client(options: Partial<AgentClientOptions> = {}): AgentClient {
  const created = new AgentClient({
    url: server.url,
    agent: AGENT,
    secret: SECRET,
    retry: { baseDelayMs: 5, maxDelayMs: 20 },
    onError: (error) => errors.push(error),
    ...options,
  });
  clients.push(created);
  return created;
}

beforeEach(async () => {
  server = await startFakeCountersign();
  errors.length = 0;
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await server.close();
});

describe('request signing', () => {
  it('signs every request with the agent’s secret over method, path with query and raw body', async () => {
    const agent = client();
    const { runId } = await agent.submit(plan);
    await agent.getDecision(runId);
    const [post] = server.requestsTo('POST', '/v1/runs');
    const [get] = server.requestsTo('GET', `/v1/runs/${runId}/decision`);
    for (const request of [post!, get!]) {
      expect(request.auth).toEqual({ ok: true, agent: AGENT });
      expect(request.headers['x-countersign-agent']).toBe(AGENT);
      expect(request.headers['x-countersign-timestamp']).toMatch(/^\d{10}$/);
    }
    // The query is part of what is signed.
    expect(get!.url).toBe(`/v1/runs/${runId}/decision?wait=0`);
    expect(get!.headers['x-countersign-signature']).toBe(
      requestSignature(SECRET, {
        timestamp: String(get!.headers['x-countersign-timestamp']),
        method: 'GET',
        pathWithQuery: get!.url,
        body: '',
      }),
    );
    expect(JSON.parse(post!.body)).toMatchObject({ runId, agent: AGENT, expiresIn: '2h', steps });
  });

  it('signs with the injected clock: a clock 10 minutes off is refused as unauthorized, not retried', async () => {
    const agent = client({ clock: () => Date.now() - 10 * 60_000 });
    const error = await agent.submit(plan).catch((e: unknown) => e);
    expect(isRequestError(error)).toBe(true);
    expect(error).toMatchObject({ code: 'unauthorized', status: 401 });
    expect((error as Error).message).toContain('check the agent name, its secret and the clock');
    expect(server.requestsTo('POST', '/v1/runs')).toHaveLength(1);
  });

  it('refuses a wrong secret with a RequestError (unauthorized) and sends the secret nowhere', async () => {
    const error = await client({ secret: 'not-the-secret-0123456789' })
      .submit(plan)
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'unauthorized', status: 401 });
    const sent = JSON.stringify(server.requests);
    expect(sent).not.toContain('not-the-secret');
  });

  it('signs a path prefix of the base URL as part of the path', async () => {
    const agent = client({ url: `${server.url}/countersign/` });
    await agent.getDecision('run-1').catch(() => undefined);
    expect(server.requests.at(-1)?.url).toBe('/countersign/v1/runs/run-1/decision?wait=0');
    expect(server.requests.at(-1)?.auth).toMatchObject({ ok: true });
  });
});

describe('submit', () => {
  it('answers pending with a fresh UUIDv7 run id, or approved when policy approved every step', async () => {
    expect(await client().submit(plan)).toEqual({
      runId: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      status: 'pending',
    });
    await server.close();
    server = await startFakeCountersign({ autoApprove: true });
    expect(await client().submit({ ...plan, runId: 'auto-1' })).toEqual({
      runId: 'auto-1',
      status: 'approved',
    });
  });

  it('throws the server’s refusal (422) as a SubmissionError with its phase and diagnostics', async () => {
    await server.close();
    server = await startFakeCountersign({
      invalid: () => ({
        phase: 'resolve',
        diagnostics: [
          { phase: 'resolve', code: 'unknown_tool', stepId: 's2', message: 'there is no tool rebook' },
        ],
      }),
    });
    const error = await client()
      .submit({ ...plan, runId: 'invalid-1' })
      .catch((e: unknown) => e);
    expect(isSubmissionError(error)).toBe(true);
    expect(error).toMatchObject({
      code: 'invalid_submission',
      checkedBy: 'server',
      phase: 'resolve',
      runId: 'invalid-1',
      diagnostics: [{ code: 'unknown_tool', stepId: 's2' }],
    });
  });

  it('sends ifBlocked "refuse" and throws the server’s blocked refusal; refuses another value before sending', async () => {
    await server.close();
    server = await startFakeCountersign({
      invalid: (envelope) =>
        (envelope as { ifBlocked?: string }).ifBlocked === 'refuse'
          ? {
              phase: 'authorize',
              diagnostics: [
                {
                  phase: 'authorize',
                  code: 'blocked',
                  stepId: 's2',
                  message: 'step s2: blocked by policy rule no-rescheduling',
                },
              ],
            }
          : undefined,
    });
    const agent = client();
    const error = await agent
      .submit({ ...plan, runId: 'blocked-1', ifBlocked: 'refuse' })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: 'invalid_submission',
      checkedBy: 'server',
      phase: 'authorize',
      diagnostics: [{ code: 'blocked', stepId: 's2' }],
    });
    expect(JSON.parse(server.requestsTo('POST', '/v1/runs')[0]!.body)).toMatchObject({ ifBlocked: 'refuse' });
    expect(await agent.submit({ ...plan, runId: 'reviewed-1', ifBlocked: 'review' })).toMatchObject({
      status: 'pending',
    });
    const local = await agent.submit({ ...plan, ifBlocked: 'skip' as 'refuse' }).catch((e: unknown) => e);
    expect(local).toMatchObject({
      checkedBy: 'client',
      diagnostics: [{ code: 'invalid_field', path: ['ifBlocked'] }],
    });
    expect(server.requestsTo('POST', '/v1/runs')).toHaveLength(2);
  });

  it('throws a SubmissionError and sends nothing for a plan that fails the local checks', async () => {
    const error = await client()
      .submit({ steps: [{ tool: 'issue_refund', args: { invoice_id: 'in_1', amount: 14.99 } }] })
      .catch((e: unknown) => e);
    expect(isSubmissionError(error)).toBe(true);
    expect(error).toMatchObject({ checkedBy: 'client', phase: 'parse' });
    expect((error as SubmissionError).diagnostics.map((d) => d.code)).toEqual(['non_integer_number']);
    expect(server.requests).toHaveLength(0);
  });

  it('answers the same plan under the same run id as the first time, and refuses another plan there (run_exists)', async () => {
    const agent = client();
    const first = await agent.submit({ ...plan, runId: 'same-1' });
    expect(await agent.submit({ ...plan, runId: 'same-1' })).toEqual(first);
    const error = await agent
      .submit({ ...plan, runId: 'same-1', summary: 'something else' })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'RequestError', code: 'run_exists', status: 409 });
  });

  it('retries a 503 and a dropped connection with the same body and run id, then succeeds', async () => {
    server.fail({ match: (method) => method === 'POST', status: 503 });
    server.fail({ match: (method) => method === 'POST', drop: true });
    const { runId, status } = await client().submit(plan);
    expect(status).toBe('pending');
    const posts = server.requestsTo('POST', '/v1/runs');
    expect(posts).toHaveLength(3);
    expect(new Set(posts.map((p) => p.body)).size).toBe(1);
    expect(JSON.parse(posts[0]!.body).runId).toBe(runId);
    expect(posts.every((p) => p.auth?.ok)).toBe(true);
  });

  it('gets the first answer again when the answer to an accepted plan was lost', async () => {
    server.fail({ match: (method) => method === 'POST', afterHandling: true, status: 502 });
    expect(await client().submit({ ...plan, runId: 'lost-1' })).toEqual({
      runId: 'lost-1',
      status: 'pending',
    });
    expect(server.requestsTo('POST', '/v1/runs')).toHaveLength(2);
  });

  it('waits as long as a 429’s Retry-After says before trying again', async () => {
    server.fail({
      match: (method) => method === 'POST',
      status: 429,
      headers: { 'retry-after': '1' },
      body: { error: { code: 'rate_limited', message: 'slow down' } },
    });
    const started = performance.now();
    await client().submit(plan);
    expect(performance.now() - started).toBeGreaterThanOrEqual(990);
    expect(server.requestsTo('POST', '/v1/runs')).toHaveLength(2);
  });

  it('gives up after its attempts with the last refusal, retriable, and at once on a Retry-After too long to wait', async () => {
    server.fail({ match: () => true, status: 503 }, 3);
    const error = await client({ retry: { attempts: 3, baseDelayMs: 1 } })
      .submit(plan)
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'unavailable', status: 503, retriable: true });
    expect(server.requestsTo('POST', '/v1/runs')).toHaveLength(3);

    server.fail({
      match: () => true,
      status: 429,
      headers: { 'retry-after': '3600' },
      body: { error: { code: 'rate_limited', message: 'slow down' } },
    });
    const limited = await client()
      .submit({ ...plan, runId: 'limited-1' })
      .catch((e: unknown) => e);
    expect(limited).toMatchObject({ code: 'rate_limited', status: 429, retryAfterMs: 3_600_000 });
  });

  it('reads a proxy’s HTML error page as the status’s code, and a 200 that is not JSON as bad_response', async () => {
    server.fail({ match: () => true, status: 404, body: '<html>nope</html>' });
    await expect(client().getRun('run-1')).rejects.toMatchObject({ code: 'not_found', status: 404 });
    const fake = (async () => new Response('<html>ok</html>', { status: 200 })) as typeof fetch;
    await expect(client({ fetch: fake }).getRun('run-1')).rejects.toMatchObject({ code: 'bad_response' });
  });
});

describe('answers that are not the protocol’s', () => {
  it('refuses a redirect (bad_response, naming where) instead of following it signed for another path', async () => {
    server.fail({
      match: () => true,
      status: 302,
      headers: { location: 'https://elsewhere.example/v1/runs' },
    });
    const error = await client()
      .submit(plan)
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'bad_response', status: 302 });
    expect((error as Error).message).toContain('https://elsewhere.example/v1/runs');
    expect(server.requests).toHaveLength(1);
  });

  it('does not poll in a tight loop when pending is answered without waiting', async () => {
    const agent = client({ retry: { baseDelayMs: 50, maxDelayMs: 100 } });
    const { runId } = await agent.submit(plan);
    server.fail(
      { match: (_m, path) => path.endsWith('/decision'), status: 202, body: { runId, status: 'pending' } },
      1000,
    );
    await expect(agent.waitForDecision(runId, { timeoutMs: 500 })).rejects.toMatchObject({
      code: 'decision_timeout',
    });
    expect(server.requestsTo('GET', `/v1/runs/${runId}/decision`).length).toBeLessThan(12);
  });
});

describe('waitForDecision', () => {
  it('long-polls until the decision is made, and answers one already made at once', async () => {
    const agent = client();
    const { runId } = await agent.submit(plan);
    const waiting = agent.waitForDecision(runId, { timeoutMs: 10_000 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    server.decide(runId);
    await expect(waiting).resolves.toMatchObject({ runId, status: 'approved', agent: AGENT });
    const polls = server.requestsTo('GET', `/v1/runs/${runId}/decision`);
    expect(polls).toHaveLength(1);
    expect(polls[0]!.url).toBe(`/v1/runs/${runId}/decision?wait=10`);

    const started = performance.now();
    await expect(agent.waitForDecision(runId, { timeoutMs: 50 })).resolves.toMatchObject({ runId });
    expect(performance.now() - started).toBeLessThan(500);
  });

  it('polls again after each 202 until a decision, never waiting more than 60 s a poll', async () => {
    const agent = client();
    const { runId } = await agent.submit(plan);
    // The server's wait ends twice with 202 before the decision.
    server.fail(
      { match: (_m, path) => path.endsWith('/decision'), status: 202, body: { runId, status: 'pending' } },
      2,
    );
    const waiting = agent.waitForDecision(runId, { timeoutMs: 120_000 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    server.decide(runId);
    await expect(waiting).resolves.toMatchObject({ runId });
    const polls = server.requestsTo('GET', `/v1/runs/${runId}/decision`);
    expect(polls).toHaveLength(3);
    expect(polls.every((p) => p.url.endsWith('?wait=60'))).toBe(true);
  });

  it('times out with a DecisionTimeoutError naming the run, cutting the poll at the deadline', async () => {
    const agent = client();
    const { runId } = await agent.submit(plan);
    const started = performance.now();
    const error = await agent.waitForDecision(runId, { timeoutMs: 300 }).catch((e: unknown) => e);
    expect(isDecisionTimeoutError(error)).toBe(true);
    expect(error).toMatchObject({ code: 'decision_timeout', runId, timeoutMs: 300 });
    expect(performance.now() - started).toBeLessThan(900);
  });

  it('stops waiting as soon as its signal is aborted, with an AbortError naming the run; the run stays open', async () => {
    const agent = client();
    const { runId } = await agent.submit(plan);
    const controller = new AbortController();
    const started = performance.now();
    const waiting = agent.waitForDecision(runId, { timeoutMs: 60_000, signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    const error = await waiting.catch((e: unknown) => e);
    expect(isWaitAbortedError(error)).toBe(true);
    expect(error).toMatchObject({ name: 'AbortError', code: 'aborted', runId });
    expect(performance.now() - started).toBeLessThan(1_000);
    // Aborted before it starts: no request at all.
    const polls = server.requestsTo('GET', `/v1/runs/${runId}/decision`).length;
    await expect(agent.waitForDecision(runId, { signal: AbortSignal.abort() })).rejects.toMatchObject({
      code: 'aborted',
    });
    expect(server.requestsTo('GET', `/v1/runs/${runId}/decision`)).toHaveLength(polls);
    // A decision made after the abort is still there for whoever asks.
    server.decide(runId);
    await expect(agent.waitForDecision(runId, { timeoutMs: 5_000 })).resolves.toMatchObject({ runId });
  });

  it('stops waiting when aborted during a pause between failed polls', async () => {
    const agent = client({ retry: { attempts: 1, baseDelayMs: 2_000, maxDelayMs: 2_000 } });
    const { runId } = await agent.submit(plan);
    server.fail({ match: (_m, path) => path.endsWith('/decision'), drop: true }, 5);
    const controller = new AbortController();
    const started = performance.now();
    const waiting = agent.waitForDecision(runId, { timeoutMs: 60_000, signal: controller.signal });
    setTimeout(() => controller.abort(), 300);
    await expect(waiting).rejects.toMatchObject({ name: 'AbortError', code: 'aborted' });
    expect(performance.now() - started).toBeLessThan(1_500);
  });

  it('keeps waiting through an unreachable server, reporting each failure to onError', async () => {
    const agent = client({ retry: { attempts: 1, baseDelayMs: 5, maxDelayMs: 10 } });
    const { runId } = await agent.submit(plan);
    server.fail({ match: (_m, path) => path.endsWith('/decision'), drop: true }, 3);
    const waiting = agent.waitForDecision(runId, { timeoutMs: 10_000 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    server.decide(runId);
    await expect(waiting).resolves.toMatchObject({ runId });
    expect(errors.filter(isRequestError).map((e) => e.code)).toEqual([
      'network_error',
      'network_error',
      'network_error',
    ]);
  });

  it('throws not_found for a run this agent does not have', async () => {
    await expect(client().waitForDecision('no-such-run', { timeoutMs: 1_000 })).rejects.toMatchObject({
      code: 'not_found',
      status: 404,
    });
  });
});

describe('getRun and getDecision', () => {
  it('read the run’s status, and the decision or undefined while it is pending', async () => {
    const agent = client();
    const { runId } = await agent.submit(plan);
    expect(await agent.getRun(runId)).toMatchObject({ runId, agent: AGENT, status: 'pending', version: 1 });
    expect(await agent.getDecision(runId)).toBeUndefined();
    server.decide(runId);
    expect(await agent.getDecision(runId)).toMatchObject({ runId, status: 'approved' });
    expect((await agent.getRun(runId)).status).toBe('approved');
  });

  it('refuse a malformed run id before sending anything', async () => {
    await expect(client().getRun('../admin')).rejects.toMatchObject({ code: 'invalid_argument' });
    expect(server.requests).toHaveLength(0);
  });
});

describe('reportOutcome', () => {
  async function approved() {
    const agent = client();
    const { runId } = await agent.submit(plan);
    server.decide(runId);
    return { agent, runId };
  }

  it('claims a step once: a second applying is already_claimed, then applied is recorded, then nothing more', async () => {
    const { agent, runId } = await approved();
    const claim = await agent.reportOutcome(runId, 's2', { status: 'applying' });
    expect(claim).toMatchObject({ ok: true, outcome: { runId, stepId: 's2', status: 'applying' } });
    expect(await agent.reportOutcome(runId, 's2', { status: 'applying' })).toMatchObject({
      ok: false,
      reason: 'already_claimed',
      afterLostAnswer: false,
    });
    expect(await agent.reportOutcome(runId, 's2', { status: 'applied' })).toMatchObject({
      ok: true,
      outcome: { status: 'applied' },
    });
    expect(await agent.reportOutcome(runId, 's2', { status: 'failed' })).toMatchObject({
      ok: false,
      reason: 'already_claimed',
    });
  });

  it('says when already_claimed may be its own claim: the answer to the first attempt was lost', async () => {
    const { agent, runId } = await approved();
    server.fail({ match: (_m, path) => path.endsWith('/outcome'), afterHandling: true, drop: true });
    const claim = await agent.reportOutcome(runId, 's1', { status: 'applying' });
    expect(claim).toMatchObject({ ok: false, reason: 'already_claimed', afterLostAnswer: true });
    expect(claim.ok === false && claim.message).toContain('may be its own');
    expect(server.outcomes.get(`${runId}/s1`)?.status).toBe('applying');
  });

  it('is recorded when a retry follows a refusal that did nothing (503 before handling)', async () => {
    const { agent, runId } = await approved();
    server.fail({ match: (_m, path) => path.endsWith('/outcome'), status: 503 });
    // The server says 503 before acting; the client cannot know that, yet the retry's answer is definite.
    expect(await agent.reportOutcome(runId, 's1', { status: 'applying' })).toMatchObject({ ok: true });
  });

  it('answers not_approved, not_found and unknown_step as values', async () => {
    const agent = client();
    const { runId } = await agent.submit(plan);
    expect(await agent.reportOutcome(runId, 's1', { status: 'applying' })).toMatchObject({
      ok: false,
      reason: 'not_approved',
    });
    server.decide(runId);
    expect(await agent.reportOutcome(runId, 's9', { status: 'applying' })).toMatchObject({
      ok: false,
      reason: 'unknown_step',
    });
    expect(await agent.reportOutcome('no-such-run', 's1', { status: 'applying' })).toMatchObject({
      ok: false,
      reason: 'not_found',
    });
  });

  it('cuts a long detail to the 2,000 characters the server takes', async () => {
    const { agent, runId } = await approved();
    await agent.reportOutcome(runId, 's1', { status: 'applying' });
    const failed = await agent.reportOutcome(runId, 's1', { status: 'failed', detail: 'x'.repeat(5000) });
    expect(failed.ok && failed.outcome.detail).toHaveLength(2000);
  });
});

describe('close', () => {
  it('fails a pending wait with ClientClosedError, aborts the poll, and refuses later calls', async () => {
    const agent = client();
    const { runId } = await agent.submit(plan);
    const waiting = agent.waitForDecision(runId, { timeoutMs: 60_000 }).catch((e: unknown) => e);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = performance.now();
    await agent.close();
    expect(isClientClosedError(await waiting)).toBe(true);
    expect(performance.now() - started).toBeLessThan(500);
    await expect(agent.submit(plan)).rejects.toMatchObject({ code: 'client_closed' });
  });

  it('ends a retry’s backoff at once', async () => {
    server.fail({ match: () => true, status: 429, headers: { 'retry-after': '30' } });
    const agent = client();
    const submitting = agent.submit(plan).catch((e: unknown) => e);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await agent.close();
    expect(isClientClosedError(await submitting)).toBe(true);
  });
});

describe('many requests at once', () => {
  it('sends 40 submissions at once without a MaxListenersExceededWarning', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
    process.on('warning', onWarning);
    try {
      const agent = client();
      const results = await Promise.all(Array.from({ length: 40 }, () => agent.submit(plan)));
      expect(new Set(results.map((result) => result.runId)).size).toBe(40);
      await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on the next tick
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.filter((warning) => warning.startsWith('MaxListenersExceededWarning'))).toEqual([]);
  });
});
