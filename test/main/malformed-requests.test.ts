/**
 * Nothing a signed HTTP client sends stops the bot: malformed Slack bodies (a `payload` that is `null`,
 * a number, an array, broken JSON; a JSON body that is not an object) get a 400 and the process — a
 * real child, the real `startCountersign` — keeps answering. And the process guard `npm start` installs
 * keeps it up through an error that escaped every handler.
 */
import { type ChildProcess, execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FREIGHT_AGENT } from '../../examples/freight/plans.ts';
import { findFreePort } from '../../src/devtools/redis-server.ts';
import { createSlackEmulator, type SlackEmulator, signSlackRequest } from '../../src/emulator/index.ts';
import { signedHeaders } from '../../src/protocol/index.ts';
import { startBotChild } from '../support/bot-child.ts';
import { SIGNING_SECRET } from '../support/bot-stack.ts';
import { FREIGHT_SECRET, stackPrefix } from '../support/stack.ts';

const run = promisify(execFile);
const GUARD_CHILD = fileURLToPath(new URL('../support/guard-child.ts', import.meta.url));
let slack: SlackEmulator;
let port: number;
const children: ChildProcess[] = [];
let bot: ChildProcess;
beforeAll(async () => {
  slack = createSlackEmulator({ rateLimit: false });
  await slack.start();
  port = await findFreePort();
  bot = (await startBotChild({ prefix: stackPrefix('malformed'), port, slackUrl: slack.url }, children))
    .process;
});
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await slack.stop();
});

async function signedPost(body: string, contentType: string) {
  const headers = signSlackRequest(SIGNING_SECRET, body, Math.floor(Date.now() / 1000));
  const response = await fetch(`http://127.0.0.1:${port}/slack/events`, {
    method: 'POST',
    headers: { 'content-type': contentType, ...headers },
    body,
  });
  return { status: response.status, text: await response.text() };
}

const FORM = 'application/x-www-form-urlencoded';
const JSON_TYPE = 'application/json';
const cases: readonly [string, string, string][] = [
  ['payload=null', 'payload=null', FORM],
  ['payload=1', 'payload=1', FORM],
  ['payload=[]', 'payload=%5B%5D', FORM],
  ['payload="x"', 'payload=%22x%22', FORM],
  ['payload={}', 'payload=%7B%7D', FORM],
  ['payload=broken JSON', 'payload=%7B', FORM],
  ['an empty form', '', FORM],
  ['a JSON null', 'null', JSON_TYPE],
  ['a JSON number', '7', JSON_TYPE],
  ['broken JSON', '{"type":', JSON_TYPE],
  ['block_actions without actions', `payload=${encodeURIComponent('{"type":"block_actions"}')}`, FORM],
  ['view_submission without a view', `payload=${encodeURIComponent('{"type":"view_submission"}')}`, FORM],
];

describe('malformed signed Slack requests', () => {
  it('a malformed body without a valid signature is a 401, before any parsing', async () => {
    const response = await fetch(`http://127.0.0.1:${port}/slack/events`, {
      method: 'POST',
      headers: { 'content-type': FORM, 'x-slack-signature': 'v0=00', 'x-slack-request-timestamp': '1' },
      body: 'payload=null',
    });
    expect(response.status).toBe(401);
    expect(bot.exitCode).toBeNull();
  });

  it('says what is wrong, in a few words', async () => {
    expect(await signedPost('payload=null', FORM)).toEqual({
      status: 400,
      text: 'Malformed Slack request: the payload is not a JSON object.',
    });
    const noActions = `payload=${encodeURIComponent('{"type":"block_actions","user":{"id":"U1"}}')}`;
    expect((await signedPost(noActions, FORM)).text).toBe(
      'Malformed Slack request: block_actions without a valid actions.',
    );
  });

  it.each(cases)('%s → 4xx, and the process keeps answering', async (_name, body, contentType) => {
    const answer = await signedPost(body, contentType);
    expect(answer.status, answer.text).toBeGreaterThanOrEqual(400);
    expect(answer.status, answer.text).toBeLessThan(500);
    expect(answer.text).not.toMatch(/at \w+ \(|Error:/);
    expect(bot.exitCode).toBeNull();
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(health.status).toBe(200);
  });
});

describe('malformed signed agent requests', () => {
  const bodies = ['null', '7', '[]', '"x"', '{', '{"runId":{"__proto__":1}}', '\u0000'];
  it.each(bodies)(
    'POST /v1/runs with %j → 4xx with a reason, and the process keeps answering',
    async (body) => {
      for (const path of ['/v1/runs', '/v1/runs/r1/steps/s1/outcome']) {
        const headers = signedHeaders({
          secret: FREIGHT_SECRET,
          agent: FREIGHT_AGENT,
          method: 'POST',
          pathWithQuery: path,
          body,
          now: Date.now(),
        });
        const response = await fetch(`http://127.0.0.1:${port}${path}`, {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json' },
          body,
        });
        const text = await response.text();
        expect(response.status, text).toBeGreaterThanOrEqual(400);
        expect(response.status, text).toBeLessThan(500);
        expect(text).not.toMatch(/at \w+ \(/);
      }
      expect(bot.exitCode).toBeNull();
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    },
  );
});

describe('the process guard', () => {
  it('reports an unhandled rejection and an uncaught exception, and the process keeps running', async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', GUARD_CHILD], { timeout: 20_000 });
    expect(stdout).toContain(
      'reported an unhandled promise rejection (kept running): nobody caught this rejection',
    );
    expect(stdout).toContain('reported an uncaught exception (kept running): nobody caught this exception');
    expect(stdout).toContain('alive');
  });
});
