/**
 * onDecision: the agent's decision feed consumed by long polls, at least once, in order, resuming from
 * a saved cursor after a restart; fileCursor keeps that cursor on disk.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freightSteps } from '../../examples/freight/plans.ts';
import {
  AgentClient,
  type AgentClientOptions,
  type CursorStore,
  type Decision,
  fileCursor,
} from '../../src/client/index.ts';
import {
  AGENT,
  type FakeCountersign,
  OTHER_AGENT,
  OTHER_SECRET,
  SECRET,
  startFakeCountersign,
} from './fake-countersign.ts';

const steps = freightSteps.map((step) => ({ ...step, args: { ...step.args } }));
const scratch = mkdtempSync(join(tmpdir(), 'countersign-feed-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

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

/** Submits and decides `count` runs, in order. */
async function decideRuns(count: number, agent = client()): Promise<string[]> {
  const runIds: string[] = [];
  for (let i = 0; i < count; i++) {
    const { runId } = await agent.submit({ steps, expiresIn: '2h' });
    server.decide(runId);
    runIds.push(runId);
  }
  return runIds;
}

async function until(condition: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

beforeEach(async () => {
  server = await startFakeCountersign();
  errors.length = 0;
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await server.close();
});

describe('onDecision', () => {
  it('hands over each of this agent’s decisions once, oldest first, as they are made', async () => {
    const seen: string[] = [];
    const agent = client();
    const stop = agent.onDecision((decision) => {
      seen.push(decision.runId);
    });
    const runIds = await decideRuns(3);
    // Another agent's decisions are not in this agent's feed.
    const other = client({ agent: OTHER_AGENT, secret: OTHER_SECRET });
    const { runId: othersRun } = await other.submit({ steps, expiresIn: '2h' });
    server.decide(othersRun);
    await until(() => seen.length === 3, 'three decisions');
    await stop();
    expect(seen).toEqual(runIds);
    const polls = server.requestsTo('GET', '/v1/decisions');
    expect(polls[0]?.url).toBe('/v1/decisions?wait=60');
    expect(polls.every((p) => p.auth?.ok)).toBe(true);
  });

  it('resumes after a restart from the saved cursor: a new client gets only what came after', async () => {
    const path = join(scratch, 'restart', 'decisions.cursor');
    const before = await decideRuns(2);
    const first: string[] = [];
    const stopFirst = client().onDecision((d) => void first.push(d.runId), { cursor: fileCursor(path) });
    await until(() => first.length === 2, 'the first two');
    await stopFirst();
    expect(first).toEqual(before);
    expect(readFileSync(path, 'utf8').trim()).toBe(server.feed[1]!.cursor);

    const after = await decideRuns(2); // made while the agent was down
    const pollsBefore = server.requestsTo('GET', '/v1/decisions').length;
    const second: string[] = [];
    const stopSecond = client().onDecision((d) => void second.push(d.runId), { cursor: fileCursor(path) });
    await until(() => second.length === 2, 'the next two');
    await stopSecond();
    expect(second).toEqual(after);
    expect(server.requestsTo('GET', '/v1/decisions')[pollsBefore]?.url).toBe(
      `/v1/decisions?after=${server.feed[1]!.cursor}&wait=60`,
    );
  });

  it('starts from the oldest decision the server keeps when there is no cursor', async () => {
    const runIds = await decideRuns(2);
    const seen: string[] = [];
    const stop = client().onDecision((d) => void seen.push(d.runId));
    await until(() => seen.length === 2, 'both');
    await stop();
    expect(seen).toEqual(runIds);
  });

  it('hands a decision over again, with backoff, while the handler throws — the next one waits its turn', async () => {
    const [first, second] = await decideRuns(2);
    const calls: string[] = [];
    const saved: string[] = [];
    const cursor: CursorStore = { load: async () => undefined, save: async (c) => void saved.push(c) };
    const stop = client().onDecision(
      (decision: Decision) => {
        calls.push(decision.runId);
        if (calls.length <= 2) throw new Error('the freight system is down');
      },
      { cursor },
    );
    await until(() => calls.length === 4, 'four calls');
    await stop();
    expect(calls).toEqual([first, first, first, second]);
    expect(errors.map((e) => (e as Error).message)).toEqual([
      'the freight system is down',
      'the freight system is down',
    ]);
    // The cursor passed the first decision only once it was handled.
    expect(saved[0]).toBe(server.feed[0]!.cursor);
  });

  it('skips an entry the feed repeats (a server crash) for a run it already handled', async () => {
    const [runId] = await decideRuns(1);
    const seen: string[] = [];
    const stop = client().onDecision((d) => void seen.push(d.runId));
    await until(() => seen.length === 1, 'the decision');
    server.feed.push({ cursor: 'c000002', decision: server.feed[0]!.decision });
    const [next] = await decideRuns(1);
    await until(() => seen.length === 2, 'the next decision');
    await stop();
    expect(seen).toEqual([runId, next]);
  });

  it('keeps polling through errors, reporting them, and stops at once while a poll is waiting', async () => {
    server.fail({ match: (_m, path) => path === '/v1/decisions', drop: true }, 2);
    const seen: string[] = [];
    const stop = client({ retry: { attempts: 1, baseDelayMs: 5, maxDelayMs: 10 } }).onDecision(
      (d) => void seen.push(d.runId),
    );
    const [runId] = await decideRuns(1);
    await until(() => seen.length === 1, 'the decision');
    expect(errors.filter((e) => (e as { code?: string }).code === 'network_error')).toHaveLength(2);
    const started = performance.now();
    await stop();
    expect(performance.now() - started).toBeLessThan(500);
    expect(seen).toEqual([runId]);
  });

  it('does not poll in a tight loop when empty pages are answered without waiting', async () => {
    server.fail(
      {
        match: (_m, path) => path === '/v1/decisions',
        status: 200,
        body: { decisions: [], cursor: 'c000000' },
      },
      1000,
    );
    const stop = client({ retry: { baseDelayMs: 50, maxDelayMs: 100 } }).onDecision(() => {});
    await new Promise((resolve) => setTimeout(resolve, 500));
    await stop();
    expect(server.requestsTo('GET', '/v1/decisions').length).toBeLessThan(12);
  });

  it('is stopped by close(), which waits for a running handler to finish', async () => {
    await decideRuns(1);
    let finished = false;
    let started = false;
    const agent = client();
    agent.onDecision(async () => {
      started = true;
      await new Promise((resolve) => setTimeout(resolve, 200));
      finished = true;
    });
    await until(() => started, 'the handler');
    await agent.close();
    expect(finished).toBe(true);
  });
});

describe('fileCursor', () => {
  it('loads nothing before the first save, then the last cursor saved, leaving no temporary file', async () => {
    const dir = mkdtempSync(join(scratch, 'cursor-'));
    const store = fileCursor(join(dir, 'nested', 'feed.cursor'));
    expect(await store.load()).toBeUndefined();
    await store.save('c000001');
    await store.save('c000002');
    expect(await store.load()).toBe('c000002');
    expect(readdirSync(join(dir, 'nested'))).toEqual(['feed.cursor']);
  });

  it('reads an empty file as no cursor', async () => {
    const path = join(mkdtempSync(join(scratch, 'empty-')), 'feed.cursor');
    writeFileSync(path, '\n');
    expect(await fileCursor(path).load()).toBeUndefined();
  });
});
