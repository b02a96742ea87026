/**
 * The Slack emulator for a test file: started once, reset after every test, stopped at the end, with a
 * real @slack/web-api WebClient pointed at it.
 */
import { LogLevel, WebAPIPlatformError, WebClient, type WebClientOptions } from '@slack/web-api';
import { afterAll, afterEach, beforeAll } from 'vitest';
import {
  createSlackEmulator,
  type SlackEmulator,
  type SlackEmulatorOptions,
} from '../../src/emulator/index.ts';

/** A WebClient on the emulator: no retries (so errors surface at once) and only error logs. */
export function emulatorClient(slack: SlackEmulator, options: WebClientOptions = {}): WebClient {
  return new WebClient(slack.botToken, {
    slackApiUrl: slack.url,
    retryConfig: { retries: 0 },
    logLevel: LogLevel.ERROR,
    ...options,
  });
}

/**
 * Register hooks running an emulator for this file. Read `slack` and `client` inside tests (they exist
 * once beforeAll has run). chat.postMessage's rate limit is off unless `options.rateLimit` says
 * otherwise; `options.rateLimits` (e.g. SLACK_RATE_LIMITS) apply as given. The reset after every test
 * also clears `slack.faults`.
 *
 * @example
 * const env = useSlackEmulator();
 * it('posts', async () => {
 *   await env.client.chat.postMessage({ channel: 'C0OPS', text: 'hi' });
 *   expect(env.slack.state.messages('C0OPS')).toHaveLength(1);
 * });
 */
export function useSlackEmulator(options: SlackEmulatorOptions = {}): {
  readonly slack: SlackEmulator;
  readonly client: WebClient;
} {
  const slack = createSlackEmulator({ rateLimit: false, ...options });
  let client: WebClient | undefined;
  beforeAll(async () => {
    await slack.start();
    client = emulatorClient(slack);
  });
  afterEach(() => slack.reset());
  afterAll(() => slack.stop());
  return {
    slack,
    get client() {
      if (!client) throw new Error('useSlackEmulator: the client exists once beforeAll has run');
      return client;
    },
  };
}

/** The body of the Slack error a Web API call failed with (`{ ok: false, error, … }`). */
export async function slackError(call: Promise<unknown>): Promise<WebAPIPlatformError['data']> {
  try {
    await call;
  } catch (error) {
    if (error instanceof WebAPIPlatformError) return error.data;
    throw error;
  }
  throw new Error('expected the Slack call to fail, but it succeeded');
}

/**
 * An actions block (`block_id: 'decide'`) with one Approve button (`action_id: 'approve'`), the
 * smallest card a click can be sent from.
 */
export function approveActions(value: string, button: { readonly style?: 'primary' } = {}) {
  return {
    type: 'actions',
    block_id: 'decide',
    elements: [
      {
        type: 'button',
        action_id: 'approve',
        text: { type: 'plain_text', text: 'Approve' },
        value,
        ...button,
      },
    ],
  };
}
