/**
 * Everything `npm run demo` runs, in one process, with nothing to configure: Redis (`redisUrl` or a
 * private redis-server), the Slack emulator with its web page, Countersign in HTTP mode pointed at it
 * with the freight example, and the sample agent's client. Secrets are generated at start. The browser
 * tests start the same stack.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { type FreightAgentOptions, runFreightAgent } from '../examples/freight/agent.ts';
import freightConfig, { freightConfigInput } from '../examples/freight/countersign.config.ts';
import { FREIGHT_AGENT } from '../examples/freight/plans.ts';
import { AgentClient } from '../src/client/index.ts';
import { type CountersignConfig, defineConfig, formatDuration, parseDuration } from '../src/config/index.ts';
import { generateSigningKey } from '../src/config/signing-key.ts';
import { findFreePort, type RedisServer, startRedisServer } from '../src/devtools/redis-server.ts';
import {
  type ChannelSeed,
  createSlackEmulator,
  type Persona,
  type SlackEmulator,
  type UserSeed,
} from '../src/emulator/index.ts';
import { type Countersign, startCountersign } from '../src/main.ts';
import { createReceiptSigner } from '../src/pipeline/index.ts';

/** The people of the freight example's groups, as the emulator's members. */
export const DEMO_USERS: readonly UserSeed[] = [
  { id: 'U0OP1', name: 'dana', real_name: 'Dana Ortiz', tz: 'Europe/Oslo' },
  { id: 'U0OP2', name: 'omar', real_name: 'Omar Berg', tz: 'Europe/Oslo' },
  { id: 'U0FIN1', name: 'sam', real_name: 'Sam Lindqvist', tz: 'Europe/Oslo' },
  { id: 'U0FIN2', name: 'fay', real_name: 'Fay Moreau', tz: 'Europe/Oslo' },
  { id: 'U0FIN3', name: 'ravi', real_name: 'Ravi Nair', tz: 'Europe/Oslo' },
  { id: 'U0LEAD1', name: 'lee', real_name: 'Lee Haugen', tz: 'Europe/Oslo' },
];

/** Who the page's visitor can be: the operator, the finance approvers and the team lead first. */
export const DEMO_PERSONAS: readonly Persona[] = [
  { id: 'U0OP1', label: 'Dana (operator)' },
  { id: 'U0FIN1', label: 'Sam (finance)' },
  { id: 'U0LEAD1', label: 'Lee (lead)' },
  { id: 'U0OP2', label: 'Omar (operator)' },
  { id: 'U0FIN2', label: 'Fay (finance)' },
  { id: 'U0FIN3', label: 'Ravi (finance)' },
];

/** The channels the freight config posts to: cards, and the second escalation level. */
export const DEMO_CHANNELS: readonly ChannelSeed[] = [
  { id: 'C0OPS', name: 'ops-approvals' },
  { id: 'C0ESCALATE', name: 'ops-escalations' },
];

export interface DemoOptions {
  /**
   * An existing Redis. The demo then keeps its keys under a prefix of its own and deletes exactly those at
   * stop (it never flushes). Default: a private redis-server on a free port, stopped at the end.
   */
  readonly redisUrl?: string | undefined;
  /** Port of the emulator and its page (default 0: any free port). */
  readonly port?: number;
  /** Interface to listen on (default 127.0.0.1). */
  readonly host?: string;
  /** How long the emulator waits for the bot's answer to a click (default Slack's 3 s). */
  readonly ackTimeoutMs?: number;
  readonly logLevel?: 'debug' | 'info' | 'warn' | 'error';
  /**
   * When the first escalation level fires (`'1m'`; default the freight config's 15 minutes). The second
   * level comes as long again after it, and repeats as often.
   */
  readonly escalateAfter?: string;
  /** The config to run (default: the freight example's); `escalateAfter` applies to the default only. */
  readonly config?: CountersignConfig;
  /** Agents of `config` besides the freight agent that get a secret generated at start (see `secrets`). */
  readonly agents?: readonly string[];
}

/** A running demo. */
export interface DemoStack {
  /** The page to open, e.g. `http://127.0.0.1:3100/`. */
  readonly pageUrl: string;
  /** The bot's request URL (HTTP mode), where the emulator sends signed interactions. */
  readonly eventsUrl: string;
  readonly redis: { readonly url: string; readonly private: boolean };
  /** Every key the demo writes starts with `<prefix>:`. */
  readonly prefix: string;
  /** The kid of the key this demo run signs decisions with (made for the run). */
  readonly signingKid: string;
  /** Where agents reach this Countersign (the gateway on the bot's port). */
  readonly apiUrl: string;
  readonly slack: SlackEmulator;
  readonly countersign: Countersign;
  /** The freight agent's client (its secret was generated at start). */
  readonly agent: AgentClient;
  /** Each agent's secret, generated at start: the freight agent's and those of `options.agents`. */
  readonly secrets: Readonly<Record<string, string>>;
  /** The sample agent, once: submit the freight plan, await the decision, verify and run each step. */
  runAgent(options?: FreightAgentOptions): ReturnType<typeof runFreightAgent>;
  /** Stops the agent, the bot, the emulator and the private Redis, or deletes the demo's keys. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts the demo stack.
 * @example
 * const demo = await startDemo();
 * console.log(`open ${demo.pageUrl}`);
 * const { decision } = await demo.runAgent();
 * await demo.stop();
 */
export async function startDemo(options: DemoOptions = {}): Promise<DemoStack> {
  const cleanups: (() => Promise<unknown>)[] = [];
  const stop = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) {
      await withTimeout(cleanup(), 5_000).catch((error: unknown) =>
        console.error(`demo: while stopping: ${error instanceof Error ? error.message : String(error)}`),
      );
    }
  };
  try {
    let privateRedis: RedisServer | undefined;
    if (options.redisUrl === undefined) {
      privateRedis = await startRedisServer();
      cleanups.push(() => privateRedis!.stop());
    }
    const redisUrl = options.redisUrl ?? privateRedis!.url;
    const prefix = `demo-${randomBytes(4).toString('hex')}`;
    if (privateRedis === undefined) cleanups.push(() => deleteDemoKeys(redisUrl, prefix));

    const signingSecret = randomBytes(24).toString('hex');
    const secrets = Object.fromEntries(
      [FREIGHT_AGENT, ...(options.agents ?? [])].map((name) => [name, randomBytes(24).toString('hex')]),
    );
    const agentSecret = secrets[FREIGHT_AGENT] as string;
    const host = options.host ?? '127.0.0.1';
    const botPort = await findFreePort(host);
    const eventsUrl = `http://${host}:${botPort}/slack/events`;

    const slack = createSlackEmulator({
      host,
      port: options.port ?? 0,
      botToken: `xoxb-demo-${randomBytes(12).toString('hex')}`,
      users: DEMO_USERS,
      channels: DEMO_CHANNELS,
      personas: DEMO_PERSONAS,
      interactions: {
        url: eventsUrl,
        signingSecret,
        ...(options.ackTimeoutMs === undefined ? {} : { ackTimeoutMs: options.ackTimeoutMs }),
      },
    });
    await slack.start();
    cleanups.push(() => slack.stop());

    // The demo signs decisions with a key made for this run (a deployment loads its own: npm run keygen).
    const signing = generateSigningKey();
    const signer = createReceiptSigner(signing.privateKey);
    const countersign = await startCountersign({
      config:
        options.config ??
        (options.escalateAfter === undefined ? freightConfig : withEscalationAfter(options.escalateAfter)),
      secrets,
      signing: { signer, publicKeys: [signer.publicKey] },
      redisUrl,
      prefix,
      slack: { botToken: slack.botToken, signingSecret, apiUrl: slack.url },
      port: botPort,
      logLevel: options.logLevel ?? 'warn',
    });
    cleanups.push(() => countersign.stop());

    const agent = new AgentClient({
      url: `http://${host}:${botPort}`,
      agent: FREIGHT_AGENT,
      secret: agentSecret,
    });
    cleanups.push(() => agent.close());

    return {
      pageUrl: slack.pageUrl,
      eventsUrl,
      redis: { url: redisUrl, private: privateRedis !== undefined },
      prefix,
      signingKid: signer.kid,
      apiUrl: `http://${host}:${botPort}`,
      slack,
      countersign,
      agent,
      secrets,
      runAgent: (agentOptions = {}) => runFreightAgent(agent, agentOptions),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The freight config with its escalation brought forward: level 1 after `after`, level 2 twice that. */
function withEscalationAfter(after: string): CountersignConfig {
  const ms = parseDuration(after);
  if (ms === undefined || ms < 1_000)
    throw new DemoSetupError(
      `DEMO_ESCALATE_AFTER must be a duration of 1s or more, such as 1m or 30s; got ${JSON.stringify(after)}`,
    );
  const input = freightConfigInput;
  const chain = input.escalation?.[FREIGHT_AGENT];
  if (chain === undefined) return freightConfig;
  const [first, second, ...rest] = chain.levels;
  const twice = formatDuration(2 * ms);
  return defineConfig({
    ...input,
    escalation: {
      ...input.escalation,
      [FREIGHT_AGENT]: {
        ...chain,
        levels: [
          ...(first === undefined ? [] : [{ ...first, after }]),
          ...(second === undefined ? [] : [{ ...second, after: twice }]),
          ...rest,
        ],
        ...(chain.repeat === undefined ? {} : { repeat: { ...chain.repeat, every: twice } }),
      },
    },
  });
}

/**
 * Exits on SIGINT, SIGTERM and SIGHUP (130, 143, 129), stopping the stack first where that is still
 * possible; a second signal exits at once. A private redis-server is already gone by then — the signal
 * hook of src/devtools/redis-server.ts kills it, and its directory is removed at exit — so nothing is
 * left to close gracefully (closing clients would only retry a dead Redis): exit at once. An external
 * Redis stays up, so the stack's keys are deleted first.
 */
export function exitOnSignals(
  demo: DemoStack,
  say: (line: string) => void,
  onStopping: () => void = () => undefined,
): void {
  let stopping = false;
  const onSignal = (code: number) => {
    onStopping();
    if (stopping || demo.redis.private) {
      if (demo.redis.private) say('stopped (the private redis-server and its directory are gone).');
      process.exit(code);
    }
    stopping = true;
    say('stopping: bot, Slack stand-in, and the keys in Redis…');
    void demo.stop().finally(() => process.exit(code));
  };
  process.on('SIGINT', () => onSignal(130));
  process.on('SIGTERM', () => onSignal(143));
  process.on('SIGHUP', () => onSignal(129));
}

/** A demo setting that cannot work, said in the setting's terms. */
export class DemoSetupError extends Error {}

/** Deletes the demo's keys from a Redis it does not own (SCAN + UNLINK under `<prefix>:`). */
async function deleteDemoKeys(url: string, prefix: string): Promise<void> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.unlink(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

/** Rejects when `promise` takes longer than `ms` (a stop step must not hang the whole shutdown). */
function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`gave up after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
