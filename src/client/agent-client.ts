/**
 * The agent's side of Countersign's HTTP API (docs/http-api.md): one class, `AgentClient`, over the
 * transport (http.ts), the receipt keys (receipt-keys.ts) and the decision feed (decision-feed.ts).
 */
import { setMaxListeners } from 'node:events';
import {
  CountersignError,
  DEFAULT_LIMITS,
  type Decision,
  type Grant,
  ID_PATTERN,
  keysFromJwks,
  type PlanLimits,
  type ReceiptKeys,
  RUN_ID_PATTERN,
  type StepToRun,
  type StepVerification,
} from '../pipeline/index.ts';
import {
  feedSchema,
  MAX_WAIT_SECONDS,
  PATHS,
  pendingSchema,
  runStatusSchema,
  submitAcceptedSchema,
  submitInvalidSchema,
} from '../protocol/index.ts';
import type {
  AgentClientOptions,
  OnDecisionOptions,
  RunStatus,
  Submitted,
  VerifyStepOptions,
  WaitOptions,
} from './client-types.ts';
import { consumeDecisions, type DecisionHandler, type FeedPage } from './decision-feed.ts';
import { ClientClosedError, SubmissionError } from './errors.ts';
import {
  backoffMs,
  DEFAULT_RETRY,
  type HttpAnswer,
  type HttpRequest,
  HttpTransport,
  type RetryPolicy,
  sleep,
} from './http.ts';
import { EARLY_ANSWER_MS, longPoll } from './long-poll.ts';
import { type OutcomeInput, type OutcomeReport, reportStepOutcome } from './outcome-report.ts';
import { buildPlanText, type SubmitInput } from './plan-input.ts';
import { jwksKeySource, pinnedKeySource, pinnedReceiptKeys, type ReceiptKeySource } from './receipt-keys.ts';
import { createRunIdGenerator } from './run-id.ts';
import { verifyGrantStep } from './step-gate.ts';
import { parseDecision, parseReleases, type ReleasesRead } from './wire-read.ts';

/**
 * What an agent imports to submit plans to Countersign over HTTP and act on the decisions
 * (docs/agent-client.md, docs/http-api.md). Requests are signed with the agent's secret; decisions
 * carry Countersign's Ed25519 receipt, which `verifyStep` checks with Countersign's public keys right
 * before each effect. The agent holds no Redis credentials and cannot mint a receipt.
 * @example
 * const client = new AgentClient({ url: 'https://countersign.example.com', agent: 'freight-ops', secret });
 * const { runId } = await client.submit({ summary, context, steps, expiresIn: '2h' });
 * const decision = await client.waitForDecision(runId, { timeoutMs: 3_600_000 });
 * for (const step of decision.plan?.steps ?? []) {
 *   if (!(await client.verifyStep(decision, step)).ok) break;
 *   if ((await client.reportOutcome(runId, step.id, { status: 'applying' })).ok) await run(step);
 * }
 */
export class AgentClient {
  readonly agent: string;
  private readonly http: HttpTransport;
  private readonly clock: () => number;
  private readonly limits: PlanLimits;
  private readonly retry: RetryPolicy;
  private readonly onError: (error: unknown) => void;
  private readonly nextRunId: () => string;
  private readonly keySource: ReceiptKeySource;
  private readonly closing = closingController();
  private readonly consumers = new Set<{ stop: () => Promise<void> }>();

  constructor(options: AgentClientOptions) {
    if (typeof options.secret !== 'string' || options.secret.length === 0) {
      throw new CountersignError('invalid_argument', 'AgentClient needs the agent’s secret');
    }
    if (typeof options.agent !== 'string' || !ID_PATTERN.test(options.agent)) {
      throw new CountersignError('invalid_argument', `not an agent name: ${JSON.stringify(options.agent)}`);
    }
    const fetchImpl = options.fetch ?? globalThis.fetch;
    if (typeof fetchImpl !== 'function') {
      throw new CountersignError('invalid_argument', 'no fetch: use Node 20 or later, or pass `fetch`');
    }
    this.agent = options.agent;
    this.clock = options.clock ?? Date.now;
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    this.onError = options.onError ?? ((error) => console.error('countersign client:', error));
    this.nextRunId = createRunIdGenerator(this.clock);
    try {
      this.http = new HttpTransport({
        url: String(options.url),
        agent: options.agent,
        secret: options.secret,
        fetch: fetchImpl,
        clock: this.clock,
        retry: this.retry,
        requestTimeoutMs: options.requestTimeoutMs ?? 30_000,
        closed: this.closing.signal,
      });
    } catch (error) {
      throw new CountersignError('invalid_argument', `url: ${(error as Error).message}`, { cause: error });
    }
    this.keySource =
      options.publicKeys === undefined
        ? jwksKeySource(() => this.fetchKeys())
        : pinnedKeySource(pinnedReceiptKeys(options.publicKeys));
  }

  /**
   * Checks the plan locally, then submits it (`POST /v1/runs`) and answers once Countersign has
   * validated it: `pending` (waiting for people) or `approved` (every step auto-approved). Throws
   * `SubmissionError` with diagnostics when the plan is refused — by the local parse checks before
   * anything is sent, or by the server's validation (tools, arguments, policy; `checkedBy:
   * 'server'`). Safe to retry: the same plan under the same run id answers as the first time;
   * another plan under it throws `RequestError` `run_exists`.
   * @example const { runId, status } = await client.submit({ steps: [{ tool: 'add_note', args: { … } }], expiresIn: '2h' });
   */
  async submit(input: SubmitInput): Promise<Submitted> {
    this.assertOpen();
    const runId = input.runId ?? this.nextRunId();
    const built = buildPlanText(input, { agent: this.agent, runId, now: this.clock(), limits: this.limits });
    if (!built.ok) throw new SubmissionError(built.diagnostics, { runId });
    // One text for every attempt: the server's idempotency is on the exact body.
    const request: HttpRequest = { method: 'POST', path: PATHS.runs, body: built.text };
    const answer = await this.http.request(request);
    if (answer.status === 422) {
      const invalid = this.read(request, answer, submitInvalidSchema);
      throw new SubmissionError(invalid.diagnostics as SubmissionError['diagnostics'], {
        phase: invalid.phase,
        checkedBy: 'server',
        runId: invalid.runId ?? runId,
      });
    }
    if (!isSuccess(answer)) throw this.http.refusal(request, answer);
    const accepted = this.read(request, answer, submitAcceptedSchema);
    if (accepted.runId !== runId) {
      throw this.http.badResponse(request, answer.status, `it names run ${accepted.runId}, not ${runId}`);
    }
    return { runId, status: accepted.status };
  }

  /**
   * The run as it stands now: status, version, steps with their approvals, who is awaited. For
   * showing progress; act only on a decision. Throws `RequestError` `not_found` for a run that is
   * not this agent's.
   * @example const { status, awaiting } = await client.getRun(runId);
   */
  async getRun(runId: string): Promise<RunStatus> {
    this.assertOpen();
    assertRunId(runId);
    const request: HttpRequest = { method: 'GET', path: PATHS.run(runId) };
    const answer = await this.http.request(request);
    if (answer.status !== 200) throw this.http.refusal(request, answer);
    return this.read(request, answer, runStatusSchema);
  }

  /**
   * The run's decision if there is one yet, else undefined (no waiting).
   * @example const decision = await client.getDecision(runId); // undefined while pending
   */
  async getDecision(runId: string): Promise<Decision | undefined> {
    this.assertOpen();
    assertRunId(runId);
    return this.readDecision(runId, 0);
  }

  /**
   * Resolves with the run's decision, whether it was made before or after this call, by long polls
   * of up to 60 s each. Rejects with `DecisionTimeoutError` after `timeoutMs` (the run stays open),
   * with `WaitAbortedError` (`AbortError`) as soon as `signal` is aborted;
   * a server that cannot be reached is tried again until then (each failure goes to `onError`).
   * @example const decision = await client.waitForDecision(runId, { timeoutMs: 3_600_000 });
   */
  async waitForDecision(runId: string, options: WaitOptions = {}): Promise<Decision> {
    this.assertOpen();
    assertRunId(runId);
    return this.poll(runId, options, undefined, (waitSeconds, signal) =>
      this.readDecision(runId, waitSeconds, signal),
    );
  }

  /**
   * The run's releases so far (`GET /v1/runs/{id}/releases`): each step released before the plan is
   * decided, as its signed release, oldest first; and the run's status — once it is not `pending`,
   * no more come and its decision is there. No waiting.
   * @example const { releases } = await client.getReleases(runId);
   */
  async getReleases(runId: string): Promise<ReleasesRead> {
    this.assertOpen();
    assertRunId(runId);
    return this.readReleases(runId, 0, 0);
  }

  /**
   * Resolves with what lets `stepId` run, as soon as there is one: its release (a `continue` step
   * whose approvals are complete and whose dependencies are applied, released before the plan is
   * decided), or else the run's decision once it is made — which approves the step, or says why it
   * will not run (`verifyStep` tells). Long polls of up to 60 s each; rejects as `waitForDecision`
   * does (`DecisionTimeoutError` after `timeoutMs`, `WaitAbortedError` on `signal`).
   * @example
   * const grant = await client.waitForRelease(runId, 's1', { timeoutMs: 600_000 });
   * const check = await client.verifyStep(grant, step);
   */
  async waitForRelease(runId: string, stepId: string, options: WaitOptions = {}): Promise<Grant> {
    this.assertOpen();
    assertRunId(runId);
    let held = 0;
    return this.poll(runId, options, stepId, async (waitSeconds, signal) => {
      const read = await this.readReleases(runId, held, waitSeconds, signal);
      const release = read.releases.find((candidate) => candidate.stepId === stepId);
      if (release !== undefined) return release;
      held = read.releases.length;
      if (read.status === 'pending') return undefined;
      return this.readDecision(runId, 0, signal);
    });
  }

  /** Long polls `read` (src/client/long-poll.ts) with this client's retry policy, closing and errors. */
  private poll<T>(
    runId: string,
    options: WaitOptions,
    stepId: string | undefined,
    read: (waitSeconds: number, signal: AbortSignal) => Promise<T | undefined>,
  ): Promise<T> {
    return longPoll({
      runId,
      options,
      stepId,
      read,
      retry: this.retry,
      closing: this.closing.signal,
      onError: this.onError,
    });
  }

  /**
   * Consumes this agent's decision feed (`GET /v1/decisions`), oldest first, by long polls. At least
   * once: a handler that throws gets the same decision again with backoff (and the ones after it
   * wait), and the feed may repeat a decision after a server crash; within one consumer a run's
   * decision is handled once. With a `cursor` store the consumer resumes where it stopped across
   * restarts (`fileCursor(path)`); without one it starts from the oldest decision the server keeps.
   * Claim each step with `reportOutcome('applying')` and a decision seen twice never runs a step
   * twice. Returns `stop()`, which resolves once a running handler has finished.
   * @example const stop = client.onDecision(async (decision) => { await execute(decision); }, { cursor: fileCursor('decisions.cursor') });
   */
  onDecision(handler: DecisionHandler, options: OnDecisionOptions = {}): () => Promise<void> {
    this.assertOpen();
    const consumer = consumeDecisions({
      handler,
      cursor: options.cursor,
      onError: this.onError,
      read: (after, signal) => this.readFeed(after, signal),
      earlyAnswerMs: EARLY_ANSWER_MS,
      pause: (failures, signal) => sleep(backoffMs(failures, this.retry), this.closing.signal, signal),
    });
    this.consumers.add(consumer);
    let stopping: Promise<void> | undefined;
    return () => {
      stopping ??= consumer.stop().finally(() => this.consumers.delete(consumer));
      return stopping;
    };
  }

  /**
   * The gate in front of an effect; call it right before executing `step`, with the exact tool and
   * args about to run. `grant` is the run's decision, or the step's release (`waitForRelease`). Checks
   * that the receipt is Countersign's signature (with the pinned keys, or the JWKS — fetched on first
   * use, and again when a receipt names a key it does not list, as after a rotation), that the grant
   * is this agent's, that it covers the step (an approved decision, or this step's release:
   * `not_approved` / `not_released`), that the plan has not expired and matches its digest, that
   * `step` is exactly the approved step — and, when the step depends on others, asks Countersign which
   * steps are reported applied (`GET /v1/runs/{id}`) and refuses while one is not
   * (`dependency_not_applied`, naming it; also when Countersign cannot be asked); last, with `readVersion`,
   * that each target is still at the approved version (`world_changed`). Passed, it answers the step's
   * `preconditions`. Throws `RequestError` only when the keys cannot be fetched.
   * @example
   * const check = await client.verifyStep(decision, step, { readVersion: ({ type, id }) => etagOf(type, id) });
   * if (!check.ok) throw new Error(`not running ${step.id}: ${check.message}`);
   */
  async verifyStep(grant: Grant, step: StepToRun, opts: VerifyStepOptions = {}): Promise<StepVerification> {
    this.assertOpen();
    return verifyGrantStep(
      { agent: this.agent, keySource: this.keySource, getRun: (runId) => this.getRun(runId) },
      grant,
      step,
      opts.now ?? this.clock(),
      opts.readVersion,
    );
  }

  /**
   * Reports a step's outcome. Report `applying` right before the effect: it claims the step, and a
   * second claim (a decision delivered again, a second executor) answers `already_claimed` — do not
   * run the step then. Then report `applied` or `failed` (with `detail`, cut to 2,000 characters).
   * A step left `applying` reads as `uncertain` after the server's `uncertainAfter` and is never
   * dispatched again; a person decides.
   * @example
   * const claim = await client.reportOutcome(runId, step.id, { status: 'applying' });
   * if (!claim.ok) return; // someone else has it, or it is finished: never run twice
   */
  async reportOutcome(runId: string, stepId: string, report: OutcomeInput): Promise<OutcomeReport> {
    this.assertOpen();
    assertRunId(runId);
    return reportStepOutcome(
      {
        http: this.http,
        agent: this.agent,
        read: (request, answer, schema) => this.read(request, answer, schema),
        getRun: (id) => this.getRun(id),
      },
      runId,
      stepId,
      report,
    );
  }

  /**
   * Stops the decision consumers (running handlers finish), fails pending waits with
   * `ClientClosedError` and aborts requests in flight. Later calls throw `ClientClosedError`.
   * @example process.once('SIGTERM', () => void client.close());
   */
  async close(): Promise<void> {
    if (this.closing.signal.aborted) return;
    this.closing.abort(new ClientClosedError());
    await Promise.all([...this.consumers].map((consumer) => consumer.stop()));
    this.consumers.clear();
  }

  private assertOpen(): void {
    if (this.closing.signal.aborted) throw new ClientClosedError();
  }

  /** One read of the decision: the decision, or undefined while the run is pending after `wait`. */
  private async readDecision(
    runId: string,
    waitSeconds: number,
    signal?: AbortSignal,
  ): Promise<Decision | undefined> {
    const request: HttpRequest = {
      method: 'GET',
      path: PATHS.decision(runId, waitSeconds),
      waitSeconds,
      ...(signal === undefined ? {} : { signal }),
    };
    const answer = await this.http.request(request);
    if (answer.status === 200) return this.read(request, answer, { parse: parseDecision });
    if (answer.status === 202) {
      this.read(request, answer, pendingSchema);
      return undefined;
    }
    throw this.http.refusal(request, answer);
  }

  /** One read of the run's releases, held while the run is pending with no more than `after`. */
  private async readReleases(
    runId: string,
    after: number,
    waitSeconds: number,
    signal?: AbortSignal,
  ): Promise<ReleasesRead> {
    const request: HttpRequest = {
      method: 'GET',
      path: PATHS.releases(runId, after, waitSeconds),
      waitSeconds,
      ...(signal === undefined ? {} : { signal }),
    };
    const answer = await this.http.request(request);
    if (answer.status !== 200) throw this.http.refusal(request, answer);
    const read = this.read(request, answer, { parse: parseReleases });
    if (read.runId !== runId) {
      throw this.http.badResponse(request, answer.status, `it names run ${read.runId}, not ${runId}`);
    }
    return read;
  }

  private async readFeed(after: string | undefined, signal: AbortSignal): Promise<FeedPage> {
    const request: HttpRequest = {
      method: 'GET',
      path: PATHS.decisions(after, MAX_WAIT_SECONDS),
      waitSeconds: MAX_WAIT_SECONDS,
      signal,
    };
    const answer = await this.http.request(request);
    if (answer.status !== 200) throw this.http.refusal(request, answer);
    const page = this.read(request, answer, feedSchema);
    return {
      cursor: page.cursor,
      decisions: page.decisions.map((entry) => ({
        cursor: entry.cursor,
        decision: entry.decision as Decision,
      })),
    };
  }

  private async fetchKeys(): Promise<ReceiptKeys> {
    const request: HttpRequest = { method: 'GET', path: PATHS.jwks, signed: false };
    const answer = await this.http.request(request);
    if (answer.status !== 200) throw this.http.refusal(request, answer);
    const read = keysFromJwks(answer.body);
    if (!read.ok) throw this.http.badResponse(request, answer.status, `JWKS: ${read.message}`);
    return read.keys;
  }

  /** The body read with `schema`, or a `bad_response` error naming what is wrong. */
  private read<T>(request: HttpRequest, answer: HttpAnswer, schema: { parse(value: unknown): T }): T {
    try {
      return schema.parse(answer.body);
    } catch (error) {
      const detail = error instanceof Error ? error.message.slice(0, 500) : String(error);
      throw this.http.badResponse(request, answer.status, detail);
    }
  }
}

function isSuccess(answer: HttpAnswer): boolean {
  return answer.status >= 200 && answer.status < 300;
}

function assertRunId(runId: string): void {
  if (typeof runId !== 'string' || !RUN_ID_PATTERN.test(runId)) {
    throw new CountersignError('invalid_argument', `not a run id: ${JSON.stringify(runId)}`);
  }
}

/**
 * The controller `close()` aborts. Every request in flight listens to its signal, so an agent with more
 * than 10 requests at once would otherwise get Node's MaxListenersExceededWarning for a leak it does
 * not have (each listener is removed when its request ends).
 */
function closingController(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}
