/**
 * The baseline for gateway_latency, in a child process of its own as the bot is: a bare `node:http`
 * server that reads the body, checks the agent's signature with the same function the gateway uses
 * (`verifySignedRequest`, src/protocol) and answers 202 — no routing, validation, Redis or Slack.
 * Env: PORT, AGENT_SECRET. Sends `{ ready: true }` over IPC once listening; answers `'rss'`, `'heap'` and `'cpu'` (ms used); closes on `'stop'`.
 */
import { createServer } from 'node:http';
import { FREIGHT_AGENT } from '../examples/freight/plans.ts';
import { verifySignedRequest } from '../src/protocol/index.ts';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`bare-gateway: ${name} is not set`);
  return value;
};
const secret = env('AGENT_SECRET');

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const auth = verifySignedRequest({
      header: (name) => {
        const value = req.headers[name];
        return Array.isArray(value) ? value[0] : value;
      },
      method: (req.method ?? 'GET').toUpperCase(),
      pathWithQuery: req.url ?? '/',
      body: Buffer.concat(chunks).toString('utf8'),
      now: Date.now(),
      secretOf: (agent) => (agent === FREIGHT_AGENT ? secret : undefined),
    });
    const [status, body] = auth.ok
      ? [202, '{"status":"pending"}']
      : [401, JSON.stringify({ error: { code: 'unauthorized', message: auth.message } })];
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
    res.end(body);
  });
});
server.listen(Number(env('PORT')), '127.0.0.1', () => process.send?.({ ready: true }));
process.on('message', (message) => {
  if (message === 'rss') process.send?.({ rss: process.memoryUsage().rss });
  if (message === 'heap') process.send?.({ heap: process.memoryUsage().heapUsed });
  if (message === 'cpu') {
    const { user, system } = process.cpuUsage();
    process.send?.({ cpu: (user + system) / 1000 });
  }
  if (message === 'stop') {
    server.closeAllConnections();
    server.close(() => process.disconnect());
  }
});
