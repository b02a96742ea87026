/**
 * `GET /v1/runs/{runId}/decision?wait=` (one run's decision, long-polled) and
 * `GET /v1/decisions?after=&wait=` (the agent's decision feed, long-polled, with a cursor).
 */
import { MAX_WAIT_SECONDS } from '../protocol/index.ts';
import type { AgentRequest, GatewayDeps } from './context.ts';
import { sendError, sendJson } from './http.ts';
import { notFound } from './runs.ts';

/** Entries one feed answer carries at most. */
const FEED_PAGE = 100;
const CURSOR = /^\d{1,20}-\d{1,20}$/;

export async function runDecision(deps: GatewayDeps, request: AgentRequest): Promise<void> {
  const { res, agent } = request;
  const runId = request.params.runId ?? '';
  const wait = waitSeconds(request);
  if (wait === undefined) return badWait(request);
  if ((await deps.approvals.agentOf(runId)) !== agent) return notFound(request, runId);
  // Listen before reading: a decision committed in between wakes this request instead of being missed.
  const stop = new AbortController();
  const abort = AbortSignal.any([stop.signal, request.closed]);
  const woken = wait > 0 ? deps.waiters.forRun(agent, runId, wait * 1000, abort) : undefined;
  let decision = await deps.approvals.getDecision(runId);
  if (decision === undefined && woken !== undefined) {
    await woken;
    if (request.closed.aborted) return;
    decision = await deps.approvals.getDecision(runId);
  }
  stop.abort();
  if (decision !== undefined) return sendJson(res, 200, decision);
  sendJson(res, 202, { runId, status: 'pending' });
}

export async function decisionFeed(deps: GatewayDeps, request: AgentRequest): Promise<void> {
  const { res, agent } = request;
  const wait = waitSeconds(request);
  if (wait === undefined) return badWait(request);
  const after = request.query.get('after') ?? undefined;
  if (after !== undefined && !CURSOR.test(after)) {
    return sendError(
      res,
      'invalid_request',
      'after must be a cursor from an earlier answer (like 1764561600000-0)',
    );
  }
  const stop = new AbortController();
  const abort = AbortSignal.any([stop.signal, request.closed]);
  const woken = wait > 0 ? deps.waiters.forFeed(agent, wait * 1000, abort) : undefined;
  let entries = await deps.feed.read(agent, after, FEED_PAGE);
  if (entries.length === 0 && woken !== undefined) {
    await woken;
    if (request.closed.aborted) return;
    entries = await deps.feed.read(agent, after, FEED_PAGE);
  }
  stop.abort();
  const cursor = entries.at(-1)?.cursor ?? after ?? (await deps.feed.head(agent));
  sendJson(res, 200, { decisions: entries, cursor });
}

/** `wait` in seconds, 0 when absent; undefined when it is not a number from 0 to 60. */
export function waitSeconds(request: AgentRequest): number | undefined {
  const text = request.query.get('wait');
  if (text === null) return 0;
  if (!/^\d{1,2}(\.\d{1,3})?$/.test(text)) return undefined;
  const seconds = Number(text);
  return seconds <= MAX_WAIT_SECONDS ? seconds : undefined;
}

export function badWait(request: AgentRequest): void {
  sendError(request.res, 'invalid_request', `wait must be a number of seconds from 0 to ${MAX_WAIT_SECONDS}`);
}
