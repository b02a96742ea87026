/**
 * The emulator's HTTP server: a small prefix-routed node:http server. The Web API lives under `/api/`;
 * the web page (a later issue) adds its own routes beside it.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { sendJson } from './http-io.ts';

/** Requests whose path starts with `prefix` go to `handle`, with the rest of the path. */
export interface Route {
  readonly prefix: string;
  handle(req: IncomingMessage, res: ServerResponse, rest: string): Promise<void>;
}

/** A server for `routes` (first matching prefix wins); anything else is a JSON 404. */
export function createRoutedServer(
  routes: readonly Route[],
  logError: (message: string, error: unknown) => void,
): Server {
  return createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://emulator').pathname;
    const route = routes.find((candidate) => path.startsWith(candidate.prefix));
    const handled = route
      ? route.handle(req, res, decodeURIComponent(path.slice(route.prefix.length)))
      : Promise.resolve(sendJson(res, 404, { ok: false, error: 'not_found' }));
    handled.catch((error: unknown) => {
      logError(`slack emulator: ${req.method} ${path} failed`, error);
      if (res.headersSent) res.destroy();
      else sendJson(res, 500, { ok: false, error: 'internal_error' });
    });
  });
}
