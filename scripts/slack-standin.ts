/**
 * `npm run slack-standin`: the local Slack stand-in on its own (src/emulator), for trying a deployed
 * build without a Slack workspace: point the bot's SLACK_API_URL at the URL it prints and use its bot
 * token. Port from SLACK_STANDIN_PORT (default any free one). Prints one line:
 * `slack stand-in: SLACK_API_URL=<url> SLACK_BOT_TOKEN=<token>`; Ctrl-C stops it.
 */
import { createSlackEmulator } from '../src/emulator/index.ts';

const port = Number(process.env.SLACK_STANDIN_PORT ?? '0');
if (!Number.isInteger(port) || port < 0 || port > 65_535) {
  console.error(
    `SLACK_STANDIN_PORT must be a port number, got ${JSON.stringify(process.env.SLACK_STANDIN_PORT)}`,
  );
  process.exit(2);
}
const slack = createSlackEmulator({ port, rateLimit: false });
await slack.start();
console.log(`slack stand-in: SLACK_API_URL=${slack.url} SLACK_BOT_TOKEN=${slack.botToken}`);
const stop = () => void slack.stop().finally(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
