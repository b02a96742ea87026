/**
 * Slack's request signatures, checked against the clock replicas share (Redis's time) instead of this
 * process's: a request is fresh or stale by `clock`, whatever `Date.now` says; a forged signature is
 * refused; other routes pass untouched.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { checkSlackSignatures } from '../../src/bot/slack-signature.ts';
import { signSlackRequest } from '../../src/emulator/index.ts';

const SECRET = 'signing-secret-for-the-signature-test';
const TEN_MINUTES = 10 * 60_000;
const realNow = Date.now.bind(Date);
/** What Redis's time is in this test: the real time, unless a test moves it. */
let redisTime = () => realNow();

/** The bodies that reached Bolt's receiver (what `next` saw). */
const reached: string[] = [];
const receiver = {
  requestListener: (req: IncomingMessage & { rawBody?: Buffer }, res: import('node:http').ServerResponse) => {
    reached.push(req.rawBody?.toString() ?? '(stream)');
    res.writeHead(200).end('ok');
  },
};
checkSlackSignatures(receiver, { signingSecret: SECRET, clock: () => redisTime() });
let server: Server;
let url: string;
beforeAll(async () => {
  server = createServer((req, res) => receiver.requestListener(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));
afterEach(() => {
  vi.restoreAllMocks();
  redisTime = () => realNow();
  reached.length = 0;
});

async function post(path: string, body: string, signedAtMs: number, secret = SECRET) {
  const response = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...signSlackRequest(secret, body, Math.floor(signedAtMs / 1000)),
    },
    body,
  });
  return response.status;
}

describe('Slack request signatures on the shared clock', () => {
  it('accepts a request signed now on a process whose clock runs 10 minutes fast', async () => {
    vi.spyOn(Date, 'now').mockImplementation(() => realNow() + TEN_MINUTES);
    expect(await post('/slack/events', 'payload=%7B%7D', realNow())).toBe(200);
    expect(reached).toEqual(['payload=%7B%7D']);
  });

  it('refuses a request older than 5 minutes by the shared clock, whatever this process’s clock says', async () => {
    vi.spyOn(Date, 'now').mockImplementation(() => realNow() - TEN_MINUTES);
    expect(await post('/slack/events', 'payload=%7B%7D', realNow() - 6 * 60_000)).toBe(401);
    redisTime = () => realNow() + 6 * 60_000;
    expect(await post('/slack/events', 'payload=%7B%7D', realNow())).toBe(401);
    expect(reached).toEqual([]);
  });

  it('refuses a forged signature, and hands Slack’s SSL check on without anything smuggled in it', async () => {
    expect(await post('/slack/events', 'payload=%7B%7D', realNow(), 'not-the-secret')).toBe(401);
    const smuggled = 'ssl_check=1&payload=%7B%22type%22%3A%22block_actions%22%7D';
    expect(await post('/slack/events', smuggled, realNow(), 'not-the-secret')).toBe(200);
    expect(reached).toEqual(['ssl_check=1']);
  });

  it('leaves other routes to the receiver as they are', async () => {
    expect(await post('/v1/runs', '{}', 0, 'not-the-secret')).toBe(200);
    expect(reached).toEqual(['(stream)']);
  });
});
