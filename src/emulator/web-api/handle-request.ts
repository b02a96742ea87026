/**
 * One Web API request, start to finish: read and decode the body (form or JSON, as @slack/web-api and
 * other clients send it), find the method, check the token (and that it is the kind the method takes),
 * apply injected delays and faults, apply the rate limit, run the method, record the call, answer. Every
 * answer is Slack's JSON; a fault inside is a 500 `internal_error`, never a stack trace.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Fault, type FaultSwitch, faultBody } from '../faults.ts';
import { readBody, sendJson } from '../http-io.ts';
import type { MethodRateLimiter } from '../rate-limiter.ts';
import { SLACK_TRIGGER_TTL_MS } from '../trigger-ids.ts';
import type { Workspace } from '../workspace.ts';
import type { EmulatorCall } from '../workspace-events.ts';
import { decodeArgs } from './args.ts';
import {
  type ApiArgs,
  fail,
  type MethodContext,
  type SlackResponse,
  type TokenType,
  type WebApiMethod,
} from './method.ts';

/** Bodies beyond this are refused (Slack's own limits are far lower: 40k text, 250 kB views). */
const MAX_BODY_BYTES = 5 * 1024 * 1024;

/** What the handler needs; all passed in, so tests can give it their own methods. */
export interface WebApiHandlerOptions {
  readonly workspace: Workspace;
  readonly methods: Readonly<Record<string, WebApiMethod>>;
  readonly botToken: string;
  /** The app-level token, for the methods that take one (apps.connections.open). */
  readonly appToken: string;
  readonly socketMode: MethodContext['socketMode'];
  /** Per-method rate limits (429 `ratelimited` past them); undefined = none. */
  readonly limiter: MethodRateLimiter | undefined;
  readonly now: () => number;
  /** How long a trigger id stays good (default Slack's 3000 ms). */
  readonly triggerTtlMs?: number;
  /** Injected faults and delays (default none). */
  readonly faults?: FaultSwitch;
  readonly record: (call: EmulatorCall) => void;
  readonly logError: (message: string, error: unknown) => void;
}

/** Handles `POST|GET /api/<method>`; `method` is the part after `/api/`. */
export type WebApiHandler = (req: IncomingMessage, res: ServerResponse, method: string) => Promise<void>;

/** Build the handler for `/api/<method>`. */
export function createWebApiHandler(options: WebApiHandlerOptions): WebApiHandler {
  const { faults } = options;
  return async (req, res, method) => {
    let args: ApiArgs = {};
    let fault: Fault | undefined;
    const answer = (
      status: number,
      response: SlackResponse,
      headers: { readonly [name: string]: string } = {},
    ) => {
      const call: EmulatorCall = {
        method,
        args,
        at: options.now(),
        status,
        response,
        ...(fault ? { fault: fault.kind } : {}),
      };
      options.record(call);
      options.workspace.emit({ type: 'api_call', call });
      sendJson(res, status, response, headers);
    };
    // A held request given up (reset, stop): nothing applied, nothing answered, the connection cut.
    const abandon = () => void res.destroy();
    try {
      const request = await readRequest(req);
      if (!request.ok) return answer(request.status, request.response);
      args = decodeArgs(request.args);

      const handler = Object.hasOwn(options.methods, method) ? options.methods[method] : undefined;
      if (!handler) return answer(200, fail('unknown_method', [], { req_method: method }));

      const token =
        bearerToken(req) ?? (typeof request.args.token === 'string' ? request.args.token : undefined);
      if (token === undefined || token === '') return answer(200, fail('not_authed'));
      const tokenType: TokenType | undefined =
        token === options.botToken ? 'bot' : token === options.appToken ? 'app' : undefined;
      if (tokenType === undefined) return answer(200, fail('invalid_auth'));
      if (tokenType !== (handler.token ?? 'bot')) return answer(200, fail('not_allowed_token_type'));

      if (faults) {
        const delayMs = faults.delayFor(method);
        if (delayMs > 0 && (await faults.hold(delayMs)) === 'abandon') return abandon();
        fault = faults.take(method, args);
        if (fault?.kind === '429') {
          return answer(429, fail('ratelimited'), { 'retry-after': String(fault.retryAfterSeconds) });
        }
        if (fault?.kind === 'error-before') return answer(fault.status, faultBody(fault.status));
        if (fault?.kind === 'hang' && (await faults.hold(fault.hangMs)) === 'abandon') return abandon();
      }

      const context: MethodContext = {
        workspace: options.workspace,
        socketMode: options.socketMode,
        now: options.now,
        triggerTtlMs: options.triggerTtlMs ?? SLACK_TRIGGER_TTL_MS,
      };
      const decision = options.limiter?.take(method, callChannel(args, options.workspace));
      if (decision !== undefined && !decision.ok) {
        return answer(429, fail('ratelimited'), { 'retry-after': String(decision.retryAfterSeconds) });
      }
      const response = handler.run(args, context);
      // Applied, yet the client hears a failure: the case where retrying blindly does it twice.
      if (fault?.kind === 'error-after') return answer(fault.status, faultBody(fault.status));
      return answer(200, response);
    } catch (error) {
      options.logError(`slack emulator: ${method} failed`, error);
      if (res.headersSent) {
        res.destroy();
        return;
      }
      return answer(500, fail('internal_error'));
    }
  };
}

type RawRequest =
  | { readonly ok: true; readonly args: { readonly [key: string]: unknown } }
  | { readonly ok: false; readonly status: number; readonly response: SlackResponse };

/** Query parameters merged with the body; the body wins. */
async function readRequest(req: IncomingMessage): Promise<RawRequest> {
  const query = Object.fromEntries(new URL(req.url ?? '/', 'http://emulator').searchParams);
  const body = await readBody(req, MAX_BODY_BYTES);
  if (body === 'too_large') return { ok: false, status: 413, response: fail('request_too_large') };
  if (body.length === 0) return { ok: true, args: query };
  const mediaType = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  const text = body.toString('utf8');
  switch (mediaType) {
    case 'application/x-www-form-urlencoded':
      return { ok: true, args: { ...query, ...Object.fromEntries(new URLSearchParams(text)) } };
    case 'application/json': {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        return { ok: false, status: 200, response: fail('invalid_json') };
      }
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
        return { ok: false, status: 200, response: fail('invalid_json', ['the body must be a JSON object']) };
      }
      return { ok: true, args: { ...query, ...parsed } };
    }
    case 'multipart/form-data':
      return {
        ok: false,
        status: 200,
        response: fail('invalid_form_data', ['the emulator does not accept multipart bodies (file uploads)']),
      };
    default:
      return { ok: false, status: 200, response: fail('invalid_post_type') };
  }
}

/** The channel a call is counted under: by resolved id, so "#ops" and "C0OPS" share a bucket. */
function callChannel(args: ApiArgs, workspace: Workspace): string | undefined {
  if (typeof args.channel !== 'string') return undefined;
  return workspace.channel(args.channel)?.id ?? args.channel;
}

function bearerToken(req: IncomingMessage): string | undefined {
  const match = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
  return match?.[1];
}
