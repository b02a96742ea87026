/**
 * Countersign's logs (docs/architecture.md §15): pino, one JSON object a line on stdout — or
 * pino-pretty's coloured lines when stdout is a terminal and pino-pretty (a dev dependency) is
 * installed. Lines about a run carry `runId`, and where known `agent`, `user` and `jobId`.
 *
 * No secret reaches a line: fields named like tokens and secrets are redacted, errors are reduced to
 * their name, message and code (the stack only at `debug`, never their other properties — a Slack
 * error's `original` holds the request's `Authorization` header), and every configured secret value is
 * replaced in the written line as a last guard.
 */
import { createRequire } from 'node:module';
import { type DestinationStream, type Logger, type LoggerOptions, pino } from 'pino';

export type { Logger };

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** What a line is about, where it is known. */
export interface LogFields {
  readonly runId?: string;
  readonly agent?: string;
  readonly user?: string;
  readonly jobId?: string;
}

/** Reports a failure nobody sees in Slack: `context` says what was being done. */
export type ErrorReporter = (error: unknown, context: string, fields?: LogFields) => void;

export interface LoggerSettings {
  readonly level: LogLevel;
  /** Pretty lines (default: when stdout is a terminal and pino-pretty is installed). */
  readonly pretty?: boolean;
  /** Values that must never be written (tokens, secrets, keys): replaced by `[redacted]`. */
  readonly secrets?: readonly string[];
  /** Where lines go (default stdout); tests pass their own. */
  readonly destination?: DestinationStream;
}

const REDACTED = '[redacted]';

/** Field names that hold credentials, at the top of a line or one object down. */
const SECRET_KEYS = [
  'token',
  'botToken',
  'appToken',
  'secret',
  'signingSecret',
  'password',
  'authorization',
  'Authorization',
  'privateKey',
];
const REDACT_PATHS = [
  ...SECRET_KEYS,
  ...SECRET_KEYS.map((key) => `*.${key}`),
  'headers.authorization',
  '*.headers.authorization',
  '*.headers.Authorization',
];

/**
 * A logger at `level`.
 * @example
 * const logger = createLogger({ level: 'info', secrets: [botToken] });
 * logger.child({ runId }).info('card posted');
 */
export function createLogger(settings: LoggerSettings): Logger {
  const secrets = [...new Set(settings.secrets ?? [])].filter((secret) => secret.length >= 4);
  const withStacks = settings.level === 'debug';
  const options: LoggerOptions = {
    level: settings.level,
    base: { pid: process.pid },
    redact: { paths: REDACT_PATHS, censor: REDACTED },
    serializers: { err: (error: unknown) => serializeError(error, withStacks) },
    ...(secrets.length === 0 ? {} : { hooks: { streamWrite: (line: string) => scrub(line, secrets) } }),
  };
  const pretty =
    (settings.pretty ?? process.stdout.isTTY === true) ? prettyStream(settings.destination) : undefined;
  return pino(options, pretty ?? settings.destination ?? pino.destination({ fd: 1, sync: true }));
}

/** Names, messages and codes of an error and its causes; the stack only when asked. */
export function serializeError(error: unknown, withStack: boolean, depth = 0): Record<string, unknown> {
  if (!(error instanceof Error)) return { message: String(error) };
  const code = (error as { code?: unknown }).code;
  const cause = error.cause;
  return {
    type: error.name,
    message: error.message,
    ...(typeof code === 'string' || typeof code === 'number' ? { code } : {}),
    ...(withStack && error.stack !== undefined ? { stack: error.stack } : {}),
    ...(cause !== undefined && depth < 3 ? { cause: serializeError(cause, withStack, depth + 1) } : {}),
  };
}

function scrub(line: string, secrets: readonly string[]): string {
  let scrubbed = line;
  for (const secret of secrets) {
    if (scrubbed.includes(secret)) scrubbed = scrubbed.replaceAll(secret, REDACTED);
    // The same value as it appears inside a JSON string (a PEM's newlines are `\n` there).
    const escaped = JSON.stringify(secret).slice(1, -1);
    if (escaped !== secret && scrubbed.includes(escaped)) scrubbed = scrubbed.replaceAll(escaped, REDACTED);
  }
  return scrubbed;
}

type PrettyFactory = (options: {
  colorize?: boolean;
  sync?: boolean;
  destination?: DestinationStream | number;
}) => DestinationStream;

/**
 * pino-pretty's stream into `destination` (default stdout), when pino-pretty is installed: it is a dev
 * dependency, absent after `npm ci --omit=dev`, and then lines stay JSON.
 */
function prettyStream(destination: DestinationStream | undefined): DestinationStream | undefined {
  let loaded: PrettyFactory | { default: PrettyFactory };
  try {
    loaded = createRequire(import.meta.url)('pino-pretty') as PrettyFactory | { default: PrettyFactory };
  } catch {
    return undefined;
  }
  const factory = typeof loaded === 'function' ? loaded : loaded.default;
  return factory({ colorize: destination === undefined, sync: true, destination: destination ?? 1 });
}
