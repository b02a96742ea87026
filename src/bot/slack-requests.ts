/**
 * Bolt's HTTP receiver trusts the shape of a body once its signature checks out: a signed
 * `payload=null` (or `7`, or `[]`) reaches `body.ssl_check` on a non-object, the TypeError escapes
 * Bolt's request closure and the process dies. Every signed request to the Slack endpoint is screened
 * before Bolt parses it: the body must parse to a JSON object with the fields Bolt and the listeners
 * read first (400 with a short reason otherwise).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseQuery } from 'node:querystring';
import { HTTPModuleFunctions, type HTTPReceiver } from '@slack/bolt';
import { z } from 'zod';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

const user = z.object({ id: z.string() });
/** The least of each payload Bolt and the listeners read before any check of their own. */
const interaction = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('block_actions'),
    user,
    actions: z.array(z.object({ action_id: z.string() })).min(1),
  }),
  z.object({ type: z.literal('view_submission'), user, view: z.object({ callback_id: z.string() }) }),
  z.object({ type: z.literal('view_closed'), user, view: z.object({ callback_id: z.string() }) }),
]);
const anyTyped = z.object({ type: z.string() });

/** What is wrong with a Slack request body, in a few words; `undefined` when Bolt may take it. */
export function slackBodyProblem(raw: string, contentType: string | undefined): string | undefined {
  let parsed: unknown;
  try {
    if (contentType === 'application/x-www-form-urlencoded') {
      const form = parseQuery(raw);
      if (form.payload === undefined)
        return form.ssl_check === '1' || typeof form.command === 'string'
          ? undefined
          : 'neither a payload nor a command';
      if (typeof form.payload !== 'string') return 'more than one payload field';
      parsed = JSON.parse(form.payload);
    } else {
      parsed = JSON.parse(raw);
    }
  } catch {
    return 'the body is not valid JSON';
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    return 'the payload is not a JSON object';
  const typed = anyTyped.safeParse(parsed);
  if (!typed.success) return 'the payload has no type';
  if (!['block_actions', 'view_submission', 'view_closed'].includes(typed.data.type)) return undefined;
  const checked = interaction.safeParse(parsed);
  if (checked.success) return undefined;
  const issue = checked.error.issues[0];
  return `${typed.data.type} without a valid ${issue?.path.join('.') || 'shape'}`;
}

/**
 * Puts the screen in front of the receiver's Slack endpoint, behind the signature check
 * (slack-signature.ts): a request that reaches it is signed, its body already buffered.
 */
export function screenSlackRequests(
  receiver: HTTPReceiver,
  options: { readonly bodyLimit?: number } = {},
): void {
  const internals = receiver as unknown as { handleIncomingEvent: Handler };
  const handle = internals.handleIncomingEvent.bind(receiver);
  internals.handleIncomingEvent = (req, res) => {
    screen(req, res, options, handle).catch(() => {
      if (!res.headersSent) HTTPModuleFunctions.buildNoBodyResponse(res, 400);
      else res.end();
    });
  };
}

async function screen(
  req: IncomingMessage,
  res: ServerResponse,
  options: { readonly bodyLimit?: number },
  handle: Handler,
): Promise<void> {
  let buffered: Awaited<ReturnType<typeof HTTPModuleFunctions.bufferIncomingMessage>>;
  try {
    buffered = await HTTPModuleFunctions.bufferIncomingMessage(
      req,
      options.bodyLimit ?? HTTPModuleFunctions.defaultBodyLimit,
    );
  } catch {
    HTTPModuleFunctions.buildNoBodyResponse(res, 413);
    return;
  }
  const problem = slackBodyProblem(buffered.rawBody.toString('utf8'), req.headers['content-type']);
  if (problem !== undefined) {
    res.writeHead(400, { 'content-type': 'text/plain; charset=utf-8' });
    res.end(`Malformed Slack request: ${problem}.`);
    return;
  }
  handle(buffered, res);
}
