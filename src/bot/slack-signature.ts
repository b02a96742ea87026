/**
 * Slack's request signature, checked against Redis's time (docs/architecture.md §15). Bolt's own check
 * refuses a request stamped over 5 minutes before this process's clock, so a replica whose clock runs
 * 5 minutes fast would answer every click and form 401. Bolt's check is turned off and this one runs
 * in front of its receiver: the same rules (v0 HMAC over `v0:<timestamp>:<body>`, at most 5 minutes
 * old), on the clock every replica shares.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse } from 'node:querystring';
import { HTTPModuleFunctions, type HTTPReceiver, verifySlackRequest } from '@slack/bolt';

/**
 * Puts the signature check in front of `receiver` (built with `signatureVerification: false`) for
 * `POST` to `endpoint`; other requests (the custom routes) pass as they are.
 */
export function checkSlackSignatures(
  receiver: Pick<HTTPReceiver, 'requestListener'>,
  options: { readonly signingSecret: string; readonly clock: () => number; readonly endpoint?: string },
): void {
  const endpoint = options.endpoint ?? '/slack/events';
  const next = receiver.requestListener;
  receiver.requestListener = (req: IncomingMessage, res: ServerResponse) => {
    const { pathname } = new URL(req.url ?? '/', 'http://countersign.invalid');
    if (pathname !== endpoint || req.method?.toUpperCase() !== 'POST') return next(req, res);
    verified(req, options.signingSecret, options.clock()).then(
      (buffered) => {
        if (buffered === undefined) return HTTPModuleFunctions.buildNoBodyResponse(res, 401);
        // Bolt reads the buffered body instead of the stream.
        return next(buffered, res);
      },
      () => HTTPModuleFunctions.buildNoBodyResponse(res, 413),
    );
  };
}

/** The request with its body read when its signature holds at `now`, else undefined. */
async function verified(
  req: IncomingMessage,
  signingSecret: string,
  now: number,
): Promise<IncomingMessage | undefined> {
  const buffered = await HTTPModuleFunctions.bufferIncomingMessage(req);
  const body = buffered.rawBody.toString();
  // Slack's SSL check carries no signature; anything else in its body is dropped (as Bolt does).
  if (req.headers['content-type'] === 'application/x-www-form-urlencoded' && parse(body).ssl_check === '1') {
    buffered.rawBody = Buffer.from('ssl_check=1');
    return buffered;
  }
  try {
    verifySlackRequest({
      signingSecret,
      body,
      headers: {
        'x-slack-signature': HTTPModuleFunctions.getHeader(req, 'x-slack-signature'),
        'x-slack-request-timestamp': Number(HTTPModuleFunctions.getHeader(req, 'x-slack-request-timestamp')),
      },
      nowMilliseconds: now,
    });
    return buffered;
  } catch {
    return undefined;
  }
}
