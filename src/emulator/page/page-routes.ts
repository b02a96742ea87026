/**
 * The page's HTTP routes, beside the Web API on the emulator's server:
 *
 *   GET  /                      the page (index.html)
 *   GET  /page/client/<file>    its stylesheet and browser modules
 *   GET  /page/api/state?user=  the workspace as that user sees it (PageSnapshot)
 *   GET  /page/api/events       Server-Sent Events: one `change` per workspace change
 *   POST /page/api/action       a click or a selection → block_actions to the app
 *   POST /page/api/submit       a modal submitted → view_submission to the app, response_action applied
 *   POST /page/api/close        a modal closed
 *   POST /page/api/home         the Home tab opened → app_home_opened to the app
 *   POST /page/api/command      a slash command typed in a conversation → the command to the app
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { readBody, sendJson } from '../http-io.ts';
import type { BlockActionInput } from '../interactions.ts';
import type { Route } from '../server.ts';
import type { Workspace, WorkspaceState } from '../workspace.ts';
import { PageAssets } from './page-assets.ts';
import type { PageInteractions } from './page-interactions.ts';
import type { PageActionRequest, PageFailure, Persona } from './page-protocol.ts';
import { defaultPersonas, pageSnapshot } from './page-snapshot.ts';

/** What the routes need. */
export interface PageRoutesOptions {
  readonly workspace: Workspace;
  readonly state: WorkspaceState;
  readonly interactions: PageInteractions;
  /** The user switcher (default: every member, by real name). */
  readonly personas?: readonly Persona[] | undefined;
}

const MAX_BODY_BYTES = 1024 * 1024;
/** SSE comment lines keep idle connections (and proxies) open. */
const KEEPALIVE_MS = 15_000;

/** The page never loads anything from elsewhere and runs no inline script. */
const PAGE_SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

const option = z.object({ text: z.string().max(3000), value: z.string().max(2000) });
const ids = { actionId: z.string().min(1).max(255), blockId: z.string().max(255) };
const actionSchema = z.union([
  z.object({
    type: z.literal('button'),
    ...ids,
    text: z.string().max(3000),
    value: z.string().max(2000).optional(),
    style: z.enum(['primary', 'danger']).optional(),
  }),
  z.object({
    type: z.enum(['static_select', 'overflow', 'radio_buttons']),
    ...ids,
    selectedOption: option,
    placeholder: z.string().max(3000).optional(),
  }),
  z.object({
    type: z.enum(['checkboxes', 'multi_static_select']),
    ...ids,
    selectedOptions: z.array(option).max(100),
    placeholder: z.string().max(3000).optional(),
  }),
  z.object({ type: z.literal('datepicker'), ...ids, selectedDate: z.string().max(10) }),
  z.object({ type: z.literal('timepicker'), ...ids, selectedTime: z.string().max(5) }),
  z.object({ type: z.literal('datetimepicker'), ...ids, selectedDateTime: z.int() }),
]);
const stateValues = z.record(z.string(), z.record(z.string(), z.looseObject({ type: z.string() })));
const actionRequest = z.object({
  user: z.string().min(1),
  container: z.union([
    z.object({
      type: z.literal('message'),
      channel: z.string().min(1),
      ts: z.string().min(1),
      ephemeral: z.boolean().optional(),
    }),
    z.object({ type: z.literal('view'), viewId: z.string().min(1), values: stateValues }),
  ]),
  action: actionSchema,
});
const submitRequest = z.object({ user: z.string().min(1), viewId: z.string().min(1), values: stateValues });
const closeRequest = z.object({ user: z.string().min(1), viewId: z.string().min(1) });
const homeRequest = z.object({ user: z.string().min(1) });
const commandRequest = z.object({
  user: z.string().min(1),
  channel: z.string().min(1),
  text: z.string().max(4000),
});

/** The routes for the emulator's server, after `/api/` (the last one answers `/`). */
export function createPageRoutes(options: PageRoutesOptions): Route[] {
  const { state, interactions } = options;
  const assets = new PageAssets();
  const streams = new Set<(seq: number, type: string) => void>();
  let seq = 0;
  options.workspace.subscribe((event) => {
    if (event.type === 'api_call') return; // no visible change
    seq += 1;
    for (const stream of streams) stream(seq, event.type);
  });
  const personas = () => options.personas ?? defaultPersonas(state);

  const api = async (req: IncomingMessage, res: ServerResponse, name: string): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://emulator');
    if (req.method === 'GET' && name === 'state') {
      const viewer = url.searchParams.get('user') ?? personas()[0]?.id ?? '';
      return sendJson(res, 200, pageSnapshot({ state, interactions, personas: personas(), seq }, viewer), {
        'cache-control': 'no-store',
      });
    }
    if (req.method === 'GET' && name === 'events') return streamEvents(req, res);
    if (req.method !== 'POST' || !['action', 'submit', 'close', 'home', 'command'].includes(name)) {
      return sendJson(res, 404, { ok: false, error: 'not_found', message: `No page endpoint ${name}.` });
    }
    const body = await readJson(req);
    if (!body.ok) return sendJson(res, 400, body);
    switch (name) {
      case 'action': {
        const parsed = actionRequest.safeParse(body.value);
        if (!parsed.success) return sendJson(res, 400, invalid(parsed.error));
        return sendJson(res, 200, await interactions.action(toActionRequest(parsed.data)));
      }
      case 'submit': {
        const parsed = submitRequest.safeParse(body.value);
        if (!parsed.success) return sendJson(res, 400, invalid(parsed.error));
        return sendJson(res, 200, await interactions.submit(parsed.data));
      }
      case 'home': {
        const parsed = homeRequest.safeParse(body.value);
        if (!parsed.success) return sendJson(res, 400, invalid(parsed.error));
        return sendJson(res, 200, await interactions.homeOpened(parsed.data.user));
      }
      case 'command': {
        const parsed = commandRequest.safeParse(body.value);
        if (!parsed.success) return sendJson(res, 400, invalid(parsed.error));
        return sendJson(res, 200, await interactions.command(parsed.data));
      }
      default: {
        const parsed = closeRequest.safeParse(body.value);
        if (!parsed.success) return sendJson(res, 400, invalid(parsed.error));
        return sendJson(res, 200, await interactions.close(parsed.data));
      }
    }
  };

  const streamEvents = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
    });
    res.write(`retry: 1000\nevent: hello\ndata: ${JSON.stringify({ seq })}\n\n`);
    const send = (eventSeq: number, type: string) => {
      res.write(`id: ${eventSeq}\nevent: change\ndata: ${JSON.stringify({ seq: eventSeq, type })}\n\n`);
    };
    streams.add(send);
    const keepalive = setInterval(() => res.write(': keepalive\n\n'), KEEPALIVE_MS);
    keepalive.unref();
    await new Promise<void>((resolve) => {
      res.once('close', resolve);
      req.once('error', resolve);
    });
    clearInterval(keepalive);
    streams.delete(send);
  };

  return [
    {
      prefix: '/page/',
      async handle(req, res, rest) {
        if (rest.startsWith('api/')) return api(req, res, rest.slice('api/'.length));
        if (req.method === 'GET' && rest.startsWith('client/')) {
          const asset = await assets.get(rest.slice('client/'.length));
          if (asset !== undefined) return sendText(res, 200, asset.body, asset.contentType);
        }
        return sendJson(res, 404, { ok: false, error: 'not_found' });
      },
    },
    {
      prefix: '/',
      async handle(req, res, rest) {
        if (rest !== '' || (req.method !== 'GET' && req.method !== 'HEAD')) {
          return sendJson(res, 404, { ok: false, error: 'not_found' });
        }
        const page = await assets.get('index.html');
        if (page === undefined)
          throw new Error('the emulator page is missing (src/emulator/page/client/index.html)');
        return sendText(res, 200, page.body, page.contentType, PAGE_SECURITY_HEADERS);
      },
    },
  ];
}

function sendText(
  res: ServerResponse,
  status: number,
  body: string,
  contentType: string,
  headers: { readonly [name: string]: string } = {},
): void {
  res.writeHead(status, {
    'content-type': contentType,
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    ...headers,
  });
  res.end(body);
}

async function readJson(
  req: IncomingMessage,
): Promise<{ readonly ok: true; readonly value: unknown } | PageFailure> {
  const body = await readBody(req, MAX_BODY_BYTES);
  if (body === 'too_large') return { ok: false, error: 'too_large', message: 'The request is too large.' };
  try {
    return { ok: true, value: JSON.parse(body.toString('utf8')) };
  } catch {
    return { ok: false, error: 'invalid_json', message: 'The request body is not JSON.' };
  }
}

function invalid(error: z.ZodError): PageFailure {
  return {
    ok: false,
    error: 'invalid_request',
    message: error.issues.map((issue) => `${issue.path.join('.') || '(body)'}: ${issue.message}`).join('; '),
  };
}

/** The parsed request without the `undefined`s zod leaves for absent optional fields. */
function toActionRequest(parsed: z.output<typeof actionRequest>): PageActionRequest {
  const { container, action } = parsed;
  return {
    user: parsed.user,
    container:
      container.type === 'message'
        ? {
            type: 'message',
            channel: container.channel,
            ts: container.ts,
            ...(container.ephemeral === undefined ? {} : { ephemeral: container.ephemeral }),
          }
        : container,
    action: toBlockAction(action),
  };
}

function toBlockAction(action: z.output<typeof actionSchema>): BlockActionInput {
  const placeholder = (text: string | undefined) => (text === undefined ? {} : { placeholder: text });
  switch (action.type) {
    case 'button':
      return {
        type: 'button',
        actionId: action.actionId,
        blockId: action.blockId,
        text: action.text,
        ...(action.value === undefined ? {} : { value: action.value }),
        ...(action.style === undefined ? {} : { style: action.style }),
      };
    case 'static_select':
    case 'overflow':
    case 'radio_buttons':
      return {
        type: action.type,
        actionId: action.actionId,
        blockId: action.blockId,
        selectedOption: action.selectedOption,
        ...placeholder(action.placeholder),
      };
    case 'checkboxes':
    case 'multi_static_select':
      return {
        type: action.type,
        actionId: action.actionId,
        blockId: action.blockId,
        selectedOptions: action.selectedOptions,
        ...placeholder(action.placeholder),
      };
    default:
      return action;
  }
}
