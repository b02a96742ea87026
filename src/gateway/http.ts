/** Reading requests and writing answers for the gateway: bodies with a size limit, JSON answers, refusals. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ErrorCode } from '../protocol/index.ts';

/** What reading a request body came to. */
export type BodyRead =
  | { readonly ok: true; readonly text: string }
  | { readonly ok: false; readonly tooLarge: true };

/** Reads the whole body as UTF-8, refusing (without buffering more) once it passes `maxBytes`. */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<BodyRead> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > maxBytes) {
      req.resume();
      resolve({ ok: false, tooLarge: true });
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    req.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > maxBytes) {
        done = true;
        resolve({ ok: false, tooLarge: true });
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (done) return;
      done = true;
      resolve({ ok: true, text: Buffer.concat(chunks).toString('utf8') });
    });
    req.on('error', (error) => {
      if (!done) reject(error);
      done = true;
    });
  });
}

/** Answers with a JSON body. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.writableEnded) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(text)),
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(text);
}

/** The HTTP status of each refusal code. */
export const ERROR_STATUS: Readonly<Record<ErrorCode, number>> = {
  invalid_request: 400,
  unauthorized: 401,
  not_found: 404,
  method_not_allowed: 405,
  run_exists: 409,
  already_claimed: 409,
  not_approved: 409,
  too_large: 413,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
};

/** A refusal: `{ error: { code, message } }` with the code's status (and any extra fields). */
export function sendError(
  res: ServerResponse,
  code: ErrorCode,
  message: string,
  extra: { readonly headers?: Record<string, string>; readonly body?: Record<string, unknown> } = {},
): void {
  sendJson(res, ERROR_STATUS[code], { error: { code, message }, ...extra.body }, extra.headers);
}
