/**
 * Socket Mode, Slack's side. `apps.connections.open` (app-level token) hands out a single-use ticket
 * URL; the app opens a WebSocket there on the emulator's own server and is greeted with `hello`. From
 * then on interactions reach it as envelopes
 * `{ envelope_id, type: "interactive", payload, accepts_response_payload: true }`, which it acknowledges
 * on the same socket with `{ envelope_id, payload: <response body> }` — the body it would have answered
 * over HTTP. The server pings every connection (clients drop a connection without pings for 30 s).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { type RawData, type WebSocket, WebSocketServer } from 'ws';
import { refuseUpgrade } from './http-io.ts';
import { type InteractionResponse, isJsonObject, SLACK_ACK_TIMEOUT_MS } from './interactions.ts';

/** Where apps open their Socket Mode WebSocket on the emulator's server. */
export const SOCKET_MODE_PATH = '/socket-mode';

/** How often the server pings each connection. */
const PING_INTERVAL_MS = 10_000;
/** How long stop() waits for an app to answer the close frame before cutting the connection. */
const CLOSE_GRACE_MS = 1_000;
/** How long {@link SocketModeEndpoint.connected} waits by default. */
const CONNECT_TIMEOUT_MS = 10_000;

/** Why a Socket Mode delivery (or wait) failed. */
export type SocketModeErrorCode = 'no_connection' | 'ack_timeout' | 'connection_closed';

/** A Socket Mode delivery that did not get its acknowledgement. */
export class SocketModeError extends Error {
  override readonly name = 'SocketModeError';

  constructor(
    readonly code: SocketModeErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** True for a {@link SocketModeError}. */
export function isSocketModeError(error: unknown): error is SocketModeError {
  return error instanceof SocketModeError;
}

/** Socket Mode as tests and the page use it: wait for the app, deliver interactions to it. */
export interface SocketModeEndpoint {
  /** Open connections that have been greeted with `hello`. */
  readonly connections: number;
  /** Resolves once an app is connected (at once if one is); rejects `no_connection` after `timeoutMs` (10 s). */
  connected(options?: { readonly timeoutMs?: number }): Promise<void>;
  /**
   * Sends `payload` (block_actions, view_submission, view_closed — as over HTTP) in an `interactive`
   * envelope on the newest connection and resolves to the app's acknowledgement as an HTTP-shaped
   * answer: status 200, `body` the ack's payload (null when empty), `text` its JSON ('' when empty).
   * Rejects with a {@link SocketModeError}: `no_connection`, `ack_timeout` (after `timeoutMs`, default
   * Slack's 3 s) or `connection_closed`.
   *
   * @example
   * const { body } = await slack.socketMode.deliver(buildViewSubmissionPayload({ user, view }));
   */
  deliver(
    payload: { readonly [key: string]: unknown },
    options?: { readonly timeoutMs?: number; readonly type?: EnvelopeType },
  ): Promise<InteractionResponse>;
}

/** What an envelope carries: an interaction, an Events API event, or a slash command. */
export type EnvelopeType = 'interactive' | 'events_api' | 'slash_commands';

interface PendingAck {
  readonly socket: WebSocket;
  resolve(response: InteractionResponse): void;
  reject(error: SocketModeError): void;
}

/** The emulator's Socket Mode endpoint: tickets, the WebSocket upgrade, pings and deliveries. */
export class SocketModeServer implements SocketModeEndpoint {
  readonly #wss = new WebSocketServer({ noServer: true, clientTracking: false });
  readonly #tickets = new Set<string>();
  /** Greeted connections, oldest first. */
  readonly #sockets: WebSocket[] = [];
  readonly #pending = new Map<string, PendingAck>();
  readonly #waiters = new Set<() => void>();
  #pinger: NodeJS.Timeout | undefined;

  constructor(
    private readonly deps: {
      /** The app id sent in `hello`. */
      readonly appId: string;
      /** `ws://host:port` of the running emulator. */
      readonly origin: () => string;
      readonly logError: (message: string, error: unknown) => void;
    },
  ) {}

  get connections(): number {
    return this.#sockets.length;
  }

  /** apps.connections.open: a WebSocket URL whose ticket works once. */
  openConnection(): string {
    const ticket = randomBytes(16).toString('hex');
    this.#tickets.add(ticket);
    return `${this.deps.origin()}${SOCKET_MODE_PATH}?ticket=${ticket}`;
  }

  /** The HTTP server's `upgrade` for {@link SOCKET_MODE_PATH}: a known ticket becomes a connection. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const ticket = new URL(req.url ?? '/', 'http://emulator').searchParams.get('ticket');
    if (ticket === null || !this.#tickets.delete(ticket)) {
      refuseUpgrade(socket, 401, { ok: false, error: 'invalid_ticket' });
      return;
    }
    this.#wss.handleUpgrade(req, socket, head, (connection) => this.#accept(connection));
  }

  connected(options: { readonly timeoutMs?: number } = {}): Promise<void> {
    if (this.#sockets.length > 0) return Promise.resolve();
    const timeoutMs = options.timeoutMs ?? CONNECT_TIMEOUT_MS;
    return new Promise((resolve, reject) => {
      const wake = () => {
        clearTimeout(timer);
        this.#waiters.delete(wake);
        resolve();
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(wake);
        reject(
          new SocketModeError('no_connection', `No app connected over Socket Mode within ${timeoutMs} ms.`),
        );
      }, timeoutMs);
      this.#waiters.add(wake);
    });
  }

  deliver(
    payload: { readonly [key: string]: unknown },
    options: { readonly timeoutMs?: number; readonly type?: EnvelopeType } = {},
  ): Promise<InteractionResponse> {
    const socket = this.#sockets.at(-1);
    if (socket === undefined) {
      return Promise.reject(
        new SocketModeError(
          'no_connection',
          'No app is connected over Socket Mode (it calls apps.connections.open with its xapp- token, then opens that URL).',
        ),
      );
    }
    const timeoutMs = options.timeoutMs ?? SLACK_ACK_TIMEOUT_MS;
    const envelopeId = randomUUID();
    return new Promise((resolve, reject) => {
      const settle = () => {
        clearTimeout(timer);
        this.#pending.delete(envelopeId);
      };
      const pending: PendingAck = {
        socket,
        resolve: (response) => {
          settle();
          resolve(response);
        },
        reject: (error) => {
          settle();
          reject(error);
        },
      };
      const timer = setTimeout(
        () =>
          pending.reject(
            new SocketModeError(
              'ack_timeout',
              `The app did not acknowledge envelope ${envelopeId} within ${timeoutMs} ms.`,
            ),
          ),
        timeoutMs,
      );
      this.#pending.set(envelopeId, pending);
      const envelope = {
        envelope_id: envelopeId,
        type: options.type ?? 'interactive',
        payload,
        accepts_response_payload: options.type !== 'events_api',
      };
      socket.send(JSON.stringify(envelope), (error) => {
        if (error)
          pending.reject(new SocketModeError('connection_closed', `Sending failed: ${error.message}`));
      });
    });
  }

  /** Closes every connection (close frame, then cut after a grace period) and forgets the tickets. */
  async close(): Promise<void> {
    this.#tickets.clear();
    this.#stopPinging();
    await Promise.all(
      [...this.#sockets].map(
        (socket) =>
          new Promise<void>((resolve) => {
            const cut = setTimeout(() => socket.terminate(), CLOSE_GRACE_MS);
            socket.once('close', () => {
              clearTimeout(cut);
              resolve();
            });
            socket.close(1001, 'emulator stopping');
          }),
      ),
    );
  }

  #accept(socket: WebSocket): void {
    this.#sockets.push(socket);
    socket.on('message', (data, isBinary) => this.#onMessage(socket, data, isBinary));
    socket.on('close', () => this.#forget(socket));
    socket.on('error', (error) =>
      this.deps.logError('slack emulator: a Socket Mode connection failed', error),
    );
    socket.send(
      JSON.stringify({
        type: 'hello',
        num_connections: this.#sockets.length,
        debug_info: { host: 'emulator' },
        connection_info: { app_id: this.deps.appId },
      }),
    );
    this.#pinger ??= setInterval(() => {
      for (const open of this.#sockets) open.ping();
    }, PING_INTERVAL_MS).unref();
    for (const wake of [...this.#waiters]) wake();
  }

  /** An acknowledgement settles its delivery; anything else from the app is ignored, as Slack does. */
  #onMessage(socket: WebSocket, data: RawData, isBinary: boolean): void {
    if (isBinary) return;
    let message: unknown;
    try {
      message = JSON.parse(rawText(data));
    } catch {
      return;
    }
    if (!isJsonObject(message) || typeof message.envelope_id !== 'string') return;
    const pending = this.#pending.get(message.envelope_id);
    if (pending === undefined || pending.socket !== socket) return;
    const body = isJsonObject(message.payload) ? message.payload : {};
    const empty = Object.keys(body).length === 0;
    pending.resolve({ status: 200, body: empty ? null : body, text: empty ? '' : JSON.stringify(body) });
  }

  #forget(socket: WebSocket): void {
    const index = this.#sockets.indexOf(socket);
    if (index >= 0) this.#sockets.splice(index, 1);
    if (this.#sockets.length === 0) this.#stopPinging();
    for (const pending of [...this.#pending.values()]) {
      if (pending.socket === socket) {
        pending.reject(
          new SocketModeError(
            'connection_closed',
            'The Socket Mode connection closed before the app answered.',
          ),
        );
      }
    }
  }

  #stopPinging(): void {
    clearInterval(this.#pinger);
    this.#pinger = undefined;
  }
}

function rawText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  return Buffer.from(data).toString('utf8');
}
