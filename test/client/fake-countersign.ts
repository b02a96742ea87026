/**
 * A small stand-in for Countersign's HTTP API (docs/http-api.md), for testing the client alone: it
 * checks every signature with the protocol's own `verifySignedRequest`, answers each endpoint as the
 * spec says, signs decisions with a real Ed25519 key, and can fail requests on purpose (a status, a
 * dropped connection, an answer lost after the request was acted on).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateSigningKey } from '../../src/config/signing-key.ts';
import {
  createReceiptSigner,
  type Decision,
  type Diagnostic,
  type JsonObject,
  jwksOf,
  type Precondition,
  planDigest,
  type ReceiptSigner,
  signDecision,
  stepDigest,
  type UnsignedDecision,
} from '../../src/pipeline/index.ts';
import { type AuthCheck, MAX_WAIT_SECONDS, verifySignedRequest } from '../../src/protocol/index.ts';

export const AGENT = 'freight-ops';
export const SECRET = 'freight-secret-0123456789abcdef';
export const OTHER_AGENT = 'billing-bot';
export const OTHER_SECRET = 'billing-secret-0123456789abcdef';

export interface RecordedRequest {
  readonly method: string;
  /** The request target as received: path and query. */
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
  readonly auth: AuthCheck | undefined;
}

interface Envelope {
  runId: string;
  agent: string;
  expiresAt?: string;
  steps: { id?: string; tool: string; args: JsonObject; preconditions?: Precondition[] }[];
}

interface Run {
  readonly text: string;
  readonly agent: string;
  readonly status: number;
  readonly answer: unknown;
  readonly envelope: Envelope;
  readonly expiresAt: string;
  decision?: Decision;
}

/** How a request the test chose is spoiled. */
export interface Failure {
  readonly match: (method: string, path: string) => boolean;
  /** Answer this instead (default 503 unavailable). */
  readonly status?: number;
  readonly headers?: Record<string, string>;
  readonly body?: unknown;
  /** Drop the connection instead of answering. */
  readonly drop?: boolean;
  /** Act on the request first, then lose its answer: what a crash after a commit looks like. */
  readonly afterHandling?: boolean;
}

export interface FakeOptions {
  /** Diagnostics for a plan the server's validation refuses (422). */
  readonly invalid?: (
    envelope: Envelope,
  ) => { phase: Diagnostic['phase']; diagnostics: Diagnostic[] } | undefined;
  /** Answer 202 `approved` (every step auto-approved) and decide at once. */
  readonly autoApprove?: boolean;
}

export type FakeCountersign = Awaited<ReturnType<typeof startFakeCountersign>>;

export async function startFakeCountersign(options: FakeOptions = {}) {
  const secrets = new Map([
    [AGENT, SECRET],
    [OTHER_AGENT, OTHER_SECRET],
  ]);
  let signer: ReceiptSigner = createReceiptSigner(generateSigningKey().privateKey);
  const publicKeys = [signer.publicKey];
  const runs = new Map<string, Run>();
  const outcomes = new Map<
    string,
    { runId: string; stepId: string; status: string; at: string; detail?: string }
  >();
  const feed: { cursor: string; decision: Decision }[] = [];
  const waiters = new Set<() => void>();
  const failures: (Failure & { left: number })[] = [];
  const requests: RecordedRequest[] = [];
  let jwksFetches = 0;

  const notify = (): void => {
    for (const wake of [...waiters]) wake();
  };
  /** Resolves when `ready()` holds or after `waitSeconds`; the answer is computed by the caller after. */
  const hold = (waitSeconds: number, ready: () => boolean, request: IncomingMessage): Promise<void> =>
    new Promise((resolve) => {
      if (ready() || waitSeconds === 0) return resolve();
      const done = (): void => {
        clearTimeout(timer);
        waiters.delete(check);
        resolve();
      };
      const check = (): void => {
        if (ready()) done();
      };
      const timer = setTimeout(done, waitSeconds * 1000);
      waiters.add(check);
      request.socket.once('close', done);
    });

  const decide = (
    runId: string,
    fields: {
      status?: Decision['status'];
      steps?: (steps: Envelope['steps']) => Envelope['steps'];
      signWith?: ReceiptSigner;
    } = {},
  ): Decision => {
    const run = runs.get(runId);
    if (run === undefined) throw new Error(`no run ${runId}`);
    const steps = (fields.steps ?? ((s) => s))(run.envelope.steps).map((step, index) => ({
      id: step.id ?? `s${index + 1}`,
      tool: step.tool,
      args: step.args,
      // What the pipeline binds from a tool's preview (issue 19): a test gives it per step.
      ...(step.preconditions === undefined ? {} : { preconditions: step.preconditions }),
    }));
    const decision = makeDecision({
      runId,
      agent: run.agent,
      expiresAt: run.expiresAt,
      steps,
      status: fields.status ?? 'approved',
      signer: fields.signWith ?? signer,
    });
    run.decision = decision;
    feed.push({ cursor: `c${String(feed.length + 1).padStart(6, '0')}`, decision });
    notify();
    return decision;
  };

  const routes = async (
    method: string,
    path: string,
    query: URLSearchParams,
    body: string,
    agent: string,
    request: IncomingMessage,
  ): Promise<[number, unknown, Record<string, string>?]> => {
    const wait = Math.min(MAX_WAIT_SECONDS, Number(query.get('wait') ?? '0'));
    if (method === 'POST' && path === '/v1/runs') {
      const envelope = JSON.parse(body) as Envelope;
      const existing = runs.get(envelope.runId);
      if (existing !== undefined) {
        if (existing.text === body && existing.agent === agent) return [existing.status, existing.answer];
        return [409, refusal('run_exists', `run ${envelope.runId} exists with another plan`)];
      }
      const invalid = options.invalid?.(envelope);
      const status = invalid === undefined ? 202 : 422;
      const answer =
        invalid === undefined
          ? { runId: envelope.runId, status: options.autoApprove ? 'approved' : 'pending', version: 1 }
          : { runId: envelope.runId, status: 'invalid', ...invalid };
      const expiresAt =
        envelope.expiresAt ?? new Date(Math.floor(Date.now() / 1000) * 1000 + 2 * 3_600_000).toISOString();
      runs.set(envelope.runId, {
        text: body,
        agent,
        status,
        answer,
        envelope,
        expiresAt: expiresAt.replace('.000Z', 'Z'),
      });
      if (invalid === undefined && options.autoApprove) decide(envelope.runId);
      return [status, answer];
    }
    const match = /^\/v1\/runs\/([^/]+)(\/decision|\/steps\/([^/]+)\/outcome)?$/.exec(path);
    if (match !== null) {
      const runId = decodeURIComponent(match[1]!);
      const run = runs.get(runId);
      if (run === undefined || run.agent !== agent) return [404, refusal('not_found', `no run ${runId}`)];
      if (method === 'GET' && match[2] === undefined) {
        const reported = [...outcomes.values()].filter((outcome) => outcome.runId === runId);
        return [200, runStatus(runId, run, reported)];
      }
      if (method === 'GET' && match[2] === '/decision') {
        await hold(wait, () => run.decision !== undefined, request);
        return run.decision === undefined ? [202, { runId, status: 'pending' }] : [200, run.decision];
      }
      if (method === 'POST' && match[3] !== undefined) {
        const stepId = decodeURIComponent(match[3]);
        const report = JSON.parse(body) as { status: string; detail?: string };
        if (run.decision?.status !== 'approved') {
          return [409, refusal('not_approved', `run ${runId} is not approved`)];
        }
        if (!run.decision.plan?.steps.some((step) => step.id === stepId)) {
          return [404, refusal('not_found', `run ${runId} has no step ${stepId}`)];
        }
        const key = `${runId}/${stepId}`;
        const previous = outcomes.get(key);
        if (previous !== undefined && (report.status === 'applying' || previous.status !== 'applying')) {
          return [409, refusal('already_claimed', `step ${stepId} is already ${previous.status}`)];
        }
        const outcome = {
          runId,
          stepId,
          status: report.status,
          at: new Date().toISOString(),
          ...pick(report),
        };
        outcomes.set(key, outcome);
        return [200, outcome];
      }
    }
    if (method === 'GET' && path === '/v1/decisions') {
      const after = query.get('after') ?? '';
      const mine = () => feed.filter((entry) => entry.decision.agent === agent && entry.cursor > after);
      await hold(wait, () => mine().length > 0, request);
      const entries = mine();
      return [200, { decisions: entries, cursor: entries.at(-1)?.cursor ?? (after || 'c000000') }];
    }
    return [404, refusal('not_found', `no route ${method} ${path}`)];
  };

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const method = request.method ?? 'GET';
    const target = request.url ?? '/';
    const url = new URL(target, 'http://fake');
    const send = (status: number, payload: unknown, headers: Record<string, string> = {}): void => {
      response.writeHead(status, { 'content-type': 'application/json', ...headers });
      response.end(payload === undefined ? '' : JSON.stringify(payload));
    };
    let auth: AuthCheck | undefined;
    if (url.pathname !== '/.well-known/jwks.json') {
      auth = verifySignedRequest({
        header: (name) => {
          const value = request.headers[name];
          return typeof value === 'string' ? value : undefined;
        },
        method,
        pathWithQuery: target,
        body,
        now: Date.now(),
        secretOf: (agent) => secrets.get(agent),
      });
    }
    requests.push({ method, url: target, headers: request.headers, body, auth });
    const failure = failures.find((candidate) => candidate.left > 0 && candidate.match(method, url.pathname));
    if (failure !== undefined) failure.left--;
    if (failure !== undefined && !failure.afterHandling) return spoil(failure, response, send);
    if (url.pathname === '/.well-known/jwks.json') {
      jwksFetches++;
      return send(200, jwksOf(publicKeys));
    }
    if (auth === undefined || !auth.ok) {
      return send(401, refusal('unauthorized', auth?.message ?? 'sign the request'));
    }
    const [status, payload, headers] = await routes(
      method,
      url.pathname,
      url.searchParams,
      body,
      auth.agent,
      request,
    );
    if (failure !== undefined) return spoil(failure, response, send);
    send(status, payload, headers);
  };

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      response.writeHead(500, { 'content-type': 'application/json' });
      response.end(JSON.stringify(refusal('internal', String(error))));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    runs,
    outcomes,
    feed,
    get signer() {
      return signer;
    },
    get jwksFetches() {
      return jwksFetches;
    },
    decide,
    /** Spoils the next `times` requests that `failure.match`. */
    fail(failure: Failure, times = 1) {
      failures.push({ ...failure, left: times });
    },
    /** A new signing key; the JWKS lists it first, then the previous ones. */
    rotate() {
      signer = createReceiptSigner(generateSigningKey().privateKey);
      publicKeys.unshift(signer.publicKey);
    },
    /** The requests whose path (without query) is `path`. */
    requestsTo(method: string, path: string) {
      return requests.filter((r) => r.method === method && new URL(r.url, 'http://fake').pathname === path);
    },
    async close() {
      notify();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A signed decision for a plan, as Countersign would make it (every step approved by U0OP1). */
export function makeDecision(input: {
  runId: string;
  agent: string;
  expiresAt: string;
  steps: readonly { id: string; tool: string; args: JsonObject; preconditions?: Precondition[] }[];
  status?: Decision['status'];
  signer: ReceiptSigner;
}): Decision {
  const decidedAt = new Date().toISOString();
  const status = input.status ?? 'approved';
  const steps = input.steps.map((step) => ({
    ...step,
    digest: stepDigest(step),
    route: 'review' as const,
    approvals: status === 'approved' ? [{ userId: 'U0OP1', at: decidedAt }] : [],
    provenance: { by: 'agent' as const, userId: null, version: 1, change: null },
  }));
  const plan = { runId: input.runId, agent: input.agent, expiresAt: input.expiresAt, steps };
  const unsigned: UnsignedDecision = {
    runId: input.runId,
    agent: input.agent,
    status,
    version: 1,
    plan: { ...plan, digest: planDigest(plan) },
    decidedAt,
    decidedBy: 'U0OP1',
    reason: status === 'rejected' ? 'not today' : null,
    phase: null,
    diagnostics: [],
    configDigest: 'c0nf1g',
  };
  return signDecision(unsigned, input.signer);
}

function refusal(code: string, message: string) {
  return { error: { code, message } };
}

function pick(report: { detail?: string }) {
  return report.detail === undefined ? {} : { detail: report.detail };
}

function runStatus(runId: string, run: Run, reported: readonly { stepId: string; status: string }[]) {
  const decided = run.decision;
  const outcomeOf = new Map(reported.map((outcome) => [outcome.stepId, outcome.status]));
  return {
    runId,
    agent: run.agent,
    status: decided?.status ?? 'pending',
    version: 1,
    planDigest: decided?.plan?.digest ?? null,
    expiresAt: run.expiresAt,
    steps: run.envelope.steps.map((step, index) => ({
      id: step.id ?? `s${index + 1}`,
      tool: step.tool,
      digest: stepDigest(step),
      route: 'review',
      approvals: { have: decided ? 1 : 0, need: 1, satisfied: decided !== undefined },
      dependsOn: [],
      released: null,
      outcome: outcomeOf.get(step.id ?? `s${index + 1}`) ?? null,
    })),
    applied: reported.filter((outcome) => outcome.status === 'applied').map((outcome) => outcome.stepId),
    awaiting: [],
    decidedAt: decided?.decidedAt ?? null,
    decidedBy: decided?.decidedBy ?? null,
  };
}

function spoil(
  failure: Failure,
  response: ServerResponse,
  send: (status: number, payload: unknown, headers?: Record<string, string>) => void,
): void {
  if (failure.drop) {
    response.socket?.destroy();
    return;
  }
  if (typeof failure.body === 'string') {
    // An HTML page, as a proxy in front would answer.
    response.writeHead(failure.status ?? 503, { 'content-type': 'text/html', ...failure.headers });
    response.end(failure.body);
    return;
  }
  send(failure.status ?? 503, failure.body ?? refusal('unavailable', 'try again'), failure.headers ?? {});
}
