/**
 * A click is answered after its commit — unless the commit takes longer than Slack's 3 s allow: then
 * the click is acknowledged at 2 s and the commit still finishes. Redis is made slow for real: its
 * writes are paused (`CLIENT PAUSE … WRITE`) on a redis-server of this test's own, so no other test
 * waits.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RedisServer, startRedisServer } from '../../src/devtools/redis-server.ts';
import { type BotStack, botStack } from '../support/bot-stack.ts';
import { submitFreight } from '../support/freight-edits.ts';

let server: RedisServer;
let stack: BotStack;
beforeAll(async () => {
  server = await startRedisServer();
  stack = await botStack('slow-commit', { redisUrl: server.url });
});
afterAll(async () => {
  await stack?.stop();
  await server?.stop();
});

describe('a commit slower than Slack allows', () => {
  it('acknowledges the click at 2 s, then finishes the commit', async () => {
    const runId = await submitFreight(stack);
    const card = await stack.card(runId);
    const admin = new Redis(server.url);
    try {
      await admin.call('CLIENT', 'PAUSE', '4000', 'WRITE');
      const clicked = Date.now();
      const answer = await stack.click('U0OP1', card, 'approve');
      const answeredAfter = Date.now() - clicked;
      expect(answer.status).toBe(200);
      expect(answeredAfter).toBeGreaterThanOrEqual(1_900);
      expect(answeredAfter).toBeLessThan(3_000);
      expect((await admin.hget(stack.countersign.approvals.keys.forRun(runId).run, 'status')) ?? '').toBe(
        'pending',
      );
      // Redis takes writes again at 4 s: the approval the click asked for is committed.
      let status: string | undefined;
      for (let i = 0; i < 100 && status !== 'approved'; i++) {
        status = (await stack.countersign.approvals.getRun(runId))?.status;
        if (status !== 'approved') await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(status).toBe('approved');
    } finally {
      await admin.call('CLIENT', 'UNPAUSE');
      admin.disconnect();
    }
  }, 30_000);
});
