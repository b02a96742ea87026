/**
 * The Socket Mode bot stack in a process of its own, for the clean-exit test in
 * test/bot/socket-mode.test.ts: start, one approval delivered over the socket, stop — after which
 * nothing may keep the process alive. Env: REDIS_URL. Prints the decision's status, then `stopped`; if
 * the process is still running 3 s later, it prints `alive` with what keeps it running.
 */
import { botStack } from './bot-stack.ts';
import { submitFreight } from './freight-edits.ts';

const stack = await botStack('socket-exit', { socketMode: true, redisUrl: process.env.REDIS_URL ?? '' });
const runId = await submitFreight(stack);
await stack.click('U0OP1', await stack.card(runId), 'approve');
const decision = await stack.client.waitForDecision(runId, { timeoutMs: 10_000 });
process.stdout.write(`${decision.status}\n`);
await stack.stop();
process.stdout.write('stopped\n');
setTimeout(() => {
  process.stdout.write(`alive ${JSON.stringify(process.getActiveResourcesInfo())}\n`);
}, 3_000).unref();
