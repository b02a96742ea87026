/**
 * The emulator's HTTP server: a small prefix-routed node:http server. The Web API lives under `/api/`,
 * the web page's routes beside it; WebSocket upgrades (Socket Mode) are routed by exact path.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { refuseUpgrade, sendJson } from './http-io.ts';

/** Requests whose path starts with `prefix` go to `handle`, with the rest of the path. */
export interface Route {
  readonly prefix: string;
  handle(req: IncomingMessage, res: ServerResponse, rest: string): Promise<void>;
}

/** WebSocket upgrade requests for exactly `path` go to `upgrade`. */
export interface UpgradeRoute {
  readonly path: string;
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
}

/**
 * A server for `routes` (first matching prefix wins) and `upgrades`; anything else is a JSON 404 (an
 * upgrade to another path too).
 */
export function createRoutedServer(
  routes: readonly Route[],
  logError: (message: string, error: unknown) => void,
  upgrades: readonly UpgradeRoute[] = [],
): Server {
  const server = createServer((req, res) => {
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
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = new URL(req.url ?? '/', 'http://emulator').pathname;
    const route = upgrades.find((candidate) => candidate.path === path);
    if (route === undefined) return refuseUpgrade(socket, 404, { ok: false, error: 'not_found' });
    try {
      route.upgrade(req, socket, head);
    } catch (error) {
      logError(`slack emulator: upgrade ${path} failed`, error);
      socket.destroy();
    }
  });
  return server;
}
