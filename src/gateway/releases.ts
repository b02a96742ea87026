/**
 * `GET /v1/runs/{runId}/releases?after=&wait=`: the steps a run released before it was decided, each
 * as its signed release, long-polled. `after` is how many releases the caller holds already (releases
 * are never withdrawn, so a count is a cursor): the answer waits while the run is pending and has no
 * more than that, and comes at once when it has more or is decided — no release comes after that.
 */
import type { ReleasesBody } from '../protocol/index.ts';
import type { AgentRequest, GatewayDeps } from './context.ts';
import { badWait, waitSeconds } from './decisions.ts';
import { sendError, sendJson } from './http.ts';
import { notFound } from './runs.ts';

export async function runReleases(deps: GatewayDeps, request: AgentRequest): Promise<void> {
  const { res, agent } = request;
  const runId = request.params.runId ?? '';
  const wait = waitSeconds(request);
  if (wait === undefined) return badWait(request);
  const afterText = request.query.get('after');
  if (afterText !== null && !/^\d{1,6}$/.test(afterText)) {
    return sendError(res, 'invalid_request', 'after must be the number of releases already held (0 or more)');
  }
  const after = afterText === null ? 0 : Number(afterText);
  if ((await deps.approvals.agentOf(runId)) !== agent) return notFound(request, runId);
  // Listen before reading: a release committed in between wakes this request instead of being missed.
  const stop = new AbortController();
  const abort = AbortSignal.any([stop.signal, request.closed]);
  const woken = wait > 0 ? deps.waiters.forReleases(agent, runId, wait * 1000, abort) : undefined;
  let answer = await read(deps, runId);
  if (answer.status === 'pending' && answer.releases.length <= after && woken !== undefined) {
    await woken;
    if (request.closed.aborted) return;
    answer = await read(deps, runId);
  }
  stop.abort();
  sendJson(res, 200, answer);
}

async function read(deps: GatewayDeps, runId: string): Promise<ReleasesBody> {
  // Status first: a release committed just before the decision is then in the list read after it.
  const run = await deps.approvals.getRun(runId);
  const releases = await deps.releases.read(runId);
  return { runId, status: run?.status ?? 'invalid', releases };
}
