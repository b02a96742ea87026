/**
 * The client's one way to the server: signs each attempt (docs/http-api.md, Authentication), retries
 * what may succeed later — no answer, 429 (after its Retry-After), 5xx — with backoff, and turns
 * what cannot into a `RequestError`. Every call of the API is idempotent, so a retry repeats it
 * safely; what a lost answer means for a claim is the caller's to say (`afterLostAnswer`).
 */
import { type ErrorCode, errorSchema, signedHeaders } from '../protocol/index.ts';
import { ClientClosedError, RequestError, type RequestErrorCode } from './errors.ts';

export interface RetryPolicy {
  /** Attempts in all, the first included (default 5). */
  readonly attempts: number;
  /** The first backoff (default 250 ms); doubled each time, with jitter, up to `maxDelayMs`. */
  readonly baseDelayMs: number;
  /** The longest backoff (default 10 s); also caps the backoff of `onDecision` and `waitForDecision`. */
  readonly maxDelayMs: number;
  /** The longest `Retry-After` waited for (default 60 s); a longer one gives up at once with the error. */
  readonly maxRetryAfterMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = {
  attempts: 5,
  baseDelayMs: 250,
  maxDelayMs: 10_000,
  maxRetryAfterMs: 60_000,
};

export interface HttpRequest {
  readonly method: 'GET' | 'POST';
  /** The path with its query, exactly as signed and sent (built with `PATHS`). */
  readonly path: string;
  /** The raw JSON body of a POST. */
  readonly body?: string;
  /** False for the public endpoints (the JWKS): no signature headers. */
  readonly signed?: boolean;
  /** A long poll's `wait`: the attempt's timeout is stretched by it. */
  readonly waitSeconds?: number;
  /** Ends the call early: it rejects with the signal's reason. */
  readonly signal?: AbortSignal;
}

export interface HttpAnswer {
  readonly status: number;
  /** The parsed JSON body (undefined when empty). */
  readonly body: unknown;
  /**
   * An earlier attempt of this call got no definite answer (no answer at all, or a 5xx) and may have
   * been acted on by the server: a refusal now may be of this call's own earlier attempt.
   */
  readonly afterLostAnswer: boolean;
}

export interface HttpOptions {
  /** The base URL: origin and an optional path prefix, which is signed as part of each path. */
  readonly url: string;
  readonly agent: string;
  readonly secret: string;
  readonly fetch: typeof globalThis.fetch;
  /** Milliseconds since the epoch, for the signature's timestamp. */
  readonly clock: () => number;
  readonly retry: RetryPolicy;
  /** One attempt's timeout, beyond a long poll's wait. */
  readonly requestTimeoutMs: number;
  /** Aborted by `close()`. */
  readonly closed: AbortSignal;
}

type Attempt =
  | { readonly kind: 'answer'; readonly answer: HttpAnswer; readonly retryAfterMs: number | undefined }
  | { readonly kind: 'no_answer'; readonly error: unknown };

const STATUS_CODES: Readonly<Record<number, ErrorCode>> = {
  400: 'invalid_request',
  401: 'unauthorized',
  404: 'not_found',
  405: 'method_not_allowed',
  413: 'too_large',
  429: 'rate_limited',
  500: 'internal',
  503: 'unavailable',
};

export class HttpTransport {
  private readonly base: string;
  private readonly basePath: string;

  constructor(private readonly options: HttpOptions) {
    const url = new URL(options.url);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      throw new TypeError(`the Countersign url must be http(s), not ${url.protocol}`);
    }
    if (url.search !== '' || url.hash !== '') {
      throw new TypeError('the Countersign url takes no query or fragment');
    }
    this.basePath = url.pathname.replace(/\/+$/, '');
    this.base = `${url.origin}`;
  }

  /**
   * One call: answers the first definite answer (2xx, or a 4xx other than 429) as it is; throws a
   * `RequestError` when retries ran out, `ClientClosedError` after `close()`, and the signal's
   * reason when `request.signal` ends it.
   */
  async request(request: HttpRequest): Promise<HttpAnswer> {
    const { retry } = this.options;
    let afterLostAnswer = false;
    for (let attempt = 1; ; attempt++) {
      this.throwIfStopped(request.signal);
      const result = await this.attempt(request, afterLostAnswer);
      if (result.kind === 'answer' && !isRetriableStatus(result.answer.status)) return result.answer;
      const error =
        result.kind === 'answer' ? this.refusal(request, result.answer, result.retryAfterMs) : result.error;
      // A 429 was refused before anything was done; no answer or a 5xx may have been acted on.
      if (result.kind === 'no_answer' || result.answer.status >= 500) afterLostAnswer = true;
      const retryAfterMs = result.kind === 'answer' ? result.retryAfterMs : undefined;
      if (attempt >= retry.attempts || (retryAfterMs ?? 0) > retry.maxRetryAfterMs) throw error;
      await sleep(retryAfterMs ?? backoffMs(attempt, retry), this.options.closed, request.signal);
    }
  }

  /** A `RequestError` for an answer the caller does not handle (any status). */
  refusal(request: HttpRequest, answer: HttpAnswer, retryAfterMs?: number): RequestError {
    const parsed = errorSchema.safeParse(answer.body);
    const code: RequestErrorCode = parsed.success
      ? parsed.data.error.code
      : (STATUS_CODES[answer.status] ?? (answer.status >= 500 ? 'internal' : 'bad_response'));
    const message = parsed.success
      ? parsed.data.error.message
      : `unexpected answer ${answer.status}${answer.body === undefined ? '' : `: ${preview(answer.body)}`}`;
    return new RequestError({
      code,
      status: answer.status,
      message:
        code === 'unauthorized' ? `${message} (check the agent name, its secret and the clock)` : message,
      request: `${request.method} ${request.path}`,
      retryAfterMs,
    });
  }

  /** A `bad_response` error: an answer whose body is not what the protocol says. */
  badResponse(request: HttpRequest, status: number, detail: string): RequestError {
    return new RequestError({
      code: 'bad_response',
      status,
      message: `the answer is not the protocol's: ${detail}`,
      request: `${request.method} ${request.path}`,
    });
  }

  private async attempt(request: HttpRequest, afterLostAnswer: boolean): Promise<Attempt> {
    const body = request.body ?? '';
    const pathWithQuery = `${this.basePath}${request.path}`;
    const headers: Record<string, string> = { accept: 'application/json' };
    if (request.body !== undefined) headers['content-type'] = 'application/json';
    if (request.signed !== false) {
      // Signed afresh each attempt: a retry after a long Retry-After still has a current timestamp.
      Object.assign(
        headers,
        signedHeaders({
          secret: this.options.secret,
          agent: this.options.agent,
          method: request.method,
          pathWithQuery,
          body,
          now: this.options.clock(),
        }),
      );
    }
    const timeoutMs = this.options.requestTimeoutMs + (request.waitSeconds ?? 0) * 1000;
    const link = linkSignals([this.options.closed, request.signal], timeoutMs);
    try {
      const response = await this.options.fetch(`${this.base}${pathWithQuery}`, {
        method: request.method,
        headers,
        ...(request.body === undefined ? {} : { body }),
        signal: link.signal,
        redirect: 'manual', // a redirect would be followed signed for another path
      });
      if (response.status >= 300 && response.status < 400) {
        throw this.badResponse(
          request,
          response.status,
          `redirected to ${response.headers.get('location') ?? '?'}: point the client's url where Countersign answers`,
        );
      }
      const text = await response.text();
      let parsed: unknown;
      if (text !== '') {
        try {
          parsed = JSON.parse(text);
        } catch {
          if (response.ok) throw this.badResponse(request, response.status, 'the body is not JSON');
          parsed = text; // an error page: kept for the message
        }
      }
      return {
        kind: 'answer',
        answer: { status: response.status, body: parsed, afterLostAnswer },
        retryAfterMs: retryAfter(response.headers.get('retry-after'), this.options.clock()),
      };
    } catch (error) {
      if (error instanceof RequestError) throw error;
      this.throwIfStopped(request.signal);
      const timedOut = link.signal.aborted;
      return {
        kind: 'no_answer',
        error: new RequestError({
          code: 'network_error',
          status: null,
          message: timedOut
            ? `no answer within ${timeoutMs} ms`
            : `no answer (${error instanceof Error ? error.message : String(error)})`,
          request: `${request.method} ${request.path}`,
          cause: error,
        }),
      };
    } finally {
      link.dispose();
    }
  }

  private throwIfStopped(signal: AbortSignal | undefined): void {
    if (this.options.closed.aborted) throw new ClientClosedError();
    if (signal?.aborted) throw signal.reason;
  }
}

function isRetriableStatus(status: number): boolean {
  return status === 429 || status >= 500;
}

/** Exponential backoff with full jitter in its upper half: base·2^(n-1), at most `maxDelayMs`. */
export function backoffMs(attempt: number, policy: Pick<RetryPolicy, 'baseDelayMs' | 'maxDelayMs'>): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.min(attempt - 1, 30));
  return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
}

/** `Retry-After` in milliseconds: delta-seconds or an HTTP date (RFC 9110 §10.2.3). */
function retryAfter(value: string | null, now: number): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isFinite(at) ? Math.max(0, at - now) : undefined;
}

function preview(body: unknown): string {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

/**
 * Waits `ms`; rejects with `ClientClosedError` when the client closes, or the signal's reason when
 * `signal` aborts first.
 */
export function sleep(ms: number, closed: AbortSignal, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const stop = (): void => {
      clearTimeout(timer);
      closed.removeEventListener('abort', stop);
      signal?.removeEventListener('abort', stop);
      reject(closed.aborted ? new ClientClosedError() : signal?.reason);
    };
    if (closed.aborted || signal?.aborted) return stop();
    const timer = setTimeout(() => {
      closed.removeEventListener('abort', stop);
      signal?.removeEventListener('abort', stop);
      resolve();
    }, ms);
    closed.addEventListener('abort', stop, { once: true });
    signal?.addEventListener('abort', stop, { once: true });
  });
}

/**
 * One signal aborted by any of `parents` or after `timeoutMs`; `dispose` removes the listeners (a
 * long-lived parent would otherwise collect one per request).
 */
function linkSignals(
  parents: readonly (AbortSignal | undefined)[],
  timeoutMs: number,
): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const abort = (): void => controller.abort();
  const present = parents.filter((parent): parent is AbortSignal => parent !== undefined);
  for (const parent of present) {
    if (parent.aborted) controller.abort();
    else parent.addEventListener('abort', abort, { once: true });
  }
  const timer = setTimeout(abort, timeoutMs);
  return {
    signal: controller.signal,
    dispose: () => {
      clearTimeout(timer);
      for (const parent of present) parent.removeEventListener('abort', abort);
    },
  };
}
