import { inspect } from 'node:util';
import { LogLevel, type Logger as SlackLogger } from '@slack/bolt';
import type { Logger, LogLevel as OurLevel } from '../log.ts';

/**
 * Bolt's and the Web API clients' logs through ours (`component: "slack"`): their `debug(...msg)` calls
 * become one line each, an `Error` among the arguments its `err` field. Their level is ours unless
 * Bolt sets another.
 * @example
 * new App({ logger: slackLogger(logger), … });
 */
export function slackLogger(logger: Logger): SlackLogger {
  const child = logger.child({ component: 'slack' });
  const write =
    (level: OurLevel) =>
    (...parts: unknown[]): void => {
      if (!child.isLevelEnabled(level)) return;
      const err = parts.find((part) => part instanceof Error);
      const text = parts
        .filter((part) => part !== err)
        .map((part) => (typeof part === 'string' ? part : inspect(part, { depth: 3, breakLength: Infinity })))
        .join(' ');
      if (err === undefined) child[level](text);
      else child[level]({ err }, text);
    };
  return {
    debug: write('debug'),
    info: write('info'),
    warn: write('warn'),
    error: write('error'),
    setLevel: (level: LogLevel) => {
      child.level = level;
    },
    getLevel: () => toSlackLevel(child.level),
    setName: () => {},
  };
}

function toSlackLevel(level: string): LogLevel {
  switch (level) {
    case 'debug':
    case 'trace':
      return LogLevel.DEBUG;
    case 'info':
      return LogLevel.INFO;
    case 'warn':
      return LogLevel.WARN;
    default:
      return LogLevel.ERROR;
  }
}
