/**
 * manifest.json asks for every bot scope the Web API calls in src/bot need, and no method goes
 * unaccounted: a new call must be added to the table below with its scopes (Slack's method pages),
 * or this test fails. Looking for a card before re-posting reads history in every kind of
 * conversation a card, a diff or an escalation DM can be in: public and private channels, DMs and
 * group DMs.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const HISTORY = ['channels:history', 'groups:history', 'im:history', 'mpim:history'];
/** Each Web API method the bot calls, and the bot scopes it needs. */
const METHOD_SCOPES: Readonly<Record<string, readonly string[]>> = {
  'auth.test': [],
  'chat.postMessage': ['chat:write'],
  'chat.postEphemeral': ['chat:write'],
  'chat.update': ['chat:write'],
  'conversations.open': ['im:write'],
  'users.info': ['users:read'],
  'conversations.history': HISTORY,
  'conversations.replies': HISTORY,
  'chat.getPermalink': [],
  'views.open': [],
  'views.update': [],
  'views.publish': [],
  'usergroups.users.list': ['usergroups:read'],
};

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sources(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [readFileSync(join(dir, entry.name), 'utf8')]
        : [],
  );
}

describe('manifest.json', () => {
  const calls = new Set(
    sources(join(ROOT, 'src/bot')).flatMap((text) =>
      // The whole dotted name: `usergroups.users.list(` is one method, not `users.list`.
      [...text.matchAll(/\.(auth|chat|conversations|views|users|usergroups|reactions)((?:\.\w+)+)\(/g)].map(
        (match) => `${match[1]}${match[2]}`,
      ),
    ),
  );
  const manifest = JSON.parse(readFileSync(join(ROOT, 'manifest.json'), 'utf8')) as {
    oauth_config: { scopes: { bot: string[] } };
    features: {
      app_home?: { home_tab_enabled?: boolean };
      slash_commands?: { command: string; url?: string }[];
    };
    settings: {
      interactivity: { request_url: string };
      event_subscriptions?: { request_url?: string; bot_events?: string[] };
    };
  };

  it('finds the calls it checks', () => {
    expect([...calls]).toEqual(expect.arrayContaining(['chat.postMessage', 'chat.update', 'views.open']));
  });

  it('declares the App Home tab and subscribes to app_home_opened at the events URL', () => {
    expect(manifest.features.app_home?.home_tab_enabled).toBe(true);
    expect(manifest.settings.event_subscriptions?.bot_events).toContain('app_home_opened');
    expect(manifest.settings.event_subscriptions?.request_url).toBe(
      manifest.settings.interactivity.request_url,
    );
  });

  it('declares /countersign at the events URL (signature-checked like every Slack request), with its scope', () => {
    expect(manifest.features.slash_commands).toEqual([
      expect.objectContaining({ command: '/countersign', url: manifest.settings.interactivity.request_url }),
    ]);
    expect(manifest.oauth_config.scopes.bot).toContain('commands');
  });

  it('knows the scopes of every Web API method src/bot calls', () => {
    expect([...calls].filter((method) => !Object.hasOwn(METHOD_SCOPES, method))).toEqual([]);
  });

  it('asks for every scope those calls need', () => {
    const needed = new Set([...calls].flatMap((method) => METHOD_SCOPES[method] ?? []));
    expect([...needed].filter((scope) => !manifest.oauth_config.scopes.bot.includes(scope))).toEqual([]);
  });
});
