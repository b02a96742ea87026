/**
 * `npm run demo` — Countersign end to end on this machine, no Slack account needed: Redis (REDIS_URL or
 * a private redis-server), the Slack emulator with its web page, the bot in HTTP mode pointed at it, and
 * the sample freight agent, which submits its plan and prints the decision it gets and the check of
 * each step before running it.
 *
 *   npm run demo                 open the page it prints, act as Dana (operator); Ctrl-C stops everything
 *   npm run demo -- --once       exit once the agent has its decision (or DEMO_EXIT_AFTER_DECISION=1)
 *   npm run demo -- --change-world   after the approval, a dispatcher moves the delivery (or
 *                                DEMO_CHANGE_WORLD=1): the agent refuses the reschedule, world_changed
 *
 * Environment: REDIS_URL (use that Redis: keys under a fresh prefix, deleted at the end, never flushed);
 * DEMO_PORT (the page's port, default 3100, 0 = any free port; a busy port falls back to a free one);
 * DEMO_EXPIRES_IN (how long the card stays open, default 2h; `2m` shows expiry in two minutes);
 * DEMO_ESCALATE_AFTER (when the leads are told, default 15m; `1m` shows escalation in a minute, the
 * second level a minute later).
 */
import { createInterface } from 'node:readline';
import { moveDeliveryAfterApproval } from '../examples/freight/agent.ts';
import { parseDuration } from '../src/config/index.ts';
import { isRedisServerError, RedisServerNotFoundError } from '../src/devtools/redis-server.ts';
import { DemoSetupError, type DemoStack, exitOnSignals, startDemo } from './demo-stack.ts';

const DEFAULT_PORT = 3100;

async function main(): Promise<void> {
  const once = process.argv.includes('--once') || process.env.DEMO_EXIT_AFTER_DECISION === '1';
  const changeWorld = process.argv.includes('--change-world') || process.env.DEMO_CHANGE_WORLD === '1';
  const redisUrl = process.env.REDIS_URL || undefined;
  const port = process.env.DEMO_PORT === undefined ? DEFAULT_PORT : Number(process.env.DEMO_PORT);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    console.error(`DEMO_PORT must be a port number, got ${JSON.stringify(process.env.DEMO_PORT)}`);
    process.exitCode = 2;
    return;
  }

  const expiresIn = process.env.DEMO_EXPIRES_IN || undefined;
  const escalateAfter = process.env.DEMO_ESCALATE_AFTER || undefined;
  if (expiresIn !== undefined && (parseDuration(expiresIn) ?? 0) < 10_000) {
    console.error(
      `DEMO_EXPIRES_IN must be a duration of 10s or more, such as 2m or 1h; got ${JSON.stringify(expiresIn)}`,
    );
    process.exitCode = 2;
    return;
  }

  let demo: DemoStack;
  try {
    demo = await startOnPort(port, redisUrl, escalateAfter);
  } catch (error) {
    if (error instanceof DemoSetupError) {
      console.error(error.message);
      process.exitCode = 2;
      return;
    }
    if (error instanceof RedisServerNotFoundError) {
      console.error(
        [
          'npm run demo needs Redis: redis-server was not found on PATH.',
          'Install it with `apt-get install -y redis-server` (Debian/Ubuntu) or `brew install redis` (macOS),',
          'or use a Redis you already run: REDIS_URL=redis://127.0.0.1:6379 npm run demo',
        ].join('\n'),
      );
      process.exitCode = 1;
      return;
    }
    if (isRedisServerError(error)) {
      console.error(error.message);
      process.exitCode = 1;
      return;
    }
    throw error;
  }

  let stopping = false;
  const shutdown = (code: number) => {
    if (stopping) process.exit(code); // a second Ctrl-C: leave now
    stopping = true;
    console.log('\nstopping: agent, bot, emulator, Redis…');
    void demo.stop().finally(() => process.exit(code));
  };
  exitOnSignals(
    demo,
    (line) => console.log(`\n${line}`),
    () => {
      stopping = true;
    },
  );

  printBanner(demo, once, changeWorld);
  for (;;) {
    try {
      await demo.runAgent({
        log: (line) => console.log(`agent │ ${line}`),
        ...(expiresIn === undefined ? {} : { expiresIn }),
        // The freight system changes between approval and execution: the approval no longer holds.
        ...(changeWorld
          ? { afterApproval: () => console.log(`world │ ${moveDeliveryAfterApproval()}`) }
          : {}),
        onSubmitted: (runId) =>
          console.log(
            `audit │ REDIS_URL=${demo.redis.url} COUNTERSIGN_PREFIX=${demo.prefix} npm run audit -- show ${runId}`,
          ),
      });
    } catch (error) {
      if (stopping) return; // Ctrl-C closed the agent's client while it waited
      console.error(`agent │ failed: ${error instanceof Error ? error.message : String(error)}`);
      if (once) return shutdown(1);
    }
    if (stopping) return;
    if (once) return shutdown(0);
    const again = await waitForEnter(
      `\nThe agent is done. Press Enter to have it submit the plan again, or Ctrl-C to stop (${demo.pageUrl} stays up).`,
    );
    if (!again) {
      console.log(`The page stays up at ${demo.pageUrl}; Ctrl-C to stop.`);
      return;
    }
  }
}

/** The demo on `port`, or on any free port when that one is taken. */
async function startOnPort(
  port: number,
  redisUrl: string | undefined,
  escalateAfter: string | undefined,
): Promise<DemoStack> {
  const options = { redisUrl, ...(escalateAfter === undefined ? {} : { escalateAfter }) };
  try {
    return await startDemo({ port, ...options });
  } catch (error) {
    if (port === 0 || !(error instanceof Error && 'code' in error && error.code === 'EADDRINUSE'))
      throw error;
    console.log(`port ${port} is taken; using a free one instead`);
    return startDemo({ port: 0, ...options });
  }
}

function printBanner(demo: DemoStack, once: boolean, changeWorld: boolean): void {
  const redis = demo.redis.private
    ? `private redis-server at ${demo.redis.url} (stopped on exit)`
    : `${demo.redis.url} — keys under ${demo.prefix}:, deleted on exit (nothing is flushed)`;
  console.log(
    [
      '',
      'Countersign demo — everything local, no Slack account needed',
      `  Redis         ${redis}`,
      `                key prefix ${demo.prefix} (COUNTERSIGN_PREFIX=${demo.prefix} for npm run audit)`,
      `  Slack         emulator, Web API at ${demo.slack.url}`,
      `  Countersign   bot in HTTP mode at ${demo.eventsUrl} (requests signed like Slack's)`,
      `                agent API at ${demo.apiUrl}/v1 (docs/http-api.md)`,
      `                decisions signed with a key made for this demo (kid ${demo.signingKid.slice(0, 12)}…;`,
      '                a deployment loads its own: npm run keygen, then COUNTERSIGN_SIGNING_KEY_FILE)',
      `  Agent         freight-ops over HTTP (examples/freight/agent.ts)`,
      '',
      `  ➜  Open ${demo.pageUrl}`,
      '     Approve the card in #ops-approvals as Dana (operator) and watch the agent below get its decision.',
      '     Or press Edit: change the delivery date; switch to Sam (finance) and add a refund; see the diff',
      '     in the thread and what needs approving again.',
      ...(changeWorld
        ? [
            '     --change-world: after the approval a dispatcher moves the delivery; watch the agent refuse it.',
          ]
        : []),
      once ? '     (--once: exiting after the decision)' : '     Ctrl-C stops everything.',
      '',
    ].join('\n'),
  );
}

/** Resolves true when the visitor presses Enter; false when there is no terminal to read from. */
function waitForEnter(prompt: string): Promise<boolean> {
  if (!process.stdin.isTTY) return Promise.resolve(false);
  console.log(prompt);
  return new Promise((resolve) => {
    const lines = createInterface({ input: process.stdin });
    lines.once('line', () => {
      lines.close();
      resolve(true);
    });
  });
}

await main();
