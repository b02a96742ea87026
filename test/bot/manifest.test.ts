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
  'views.open': [],
  'views.update': [],
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
      [...text.matchAll(/\.(auth|chat|conversations|views|users|reactions)\.(\w+)\(/g)].map(
        (match) => `${match[1]}.${match[2]}`,
      ),
    ),
  );
  const manifest = JSON.parse(readFileSync(join(ROOT, 'manifest.json'), 'utf8')) as {
    oauth_config: { scopes: { bot: string[] } };
  };

  it('finds the calls it checks', () => {
    expect([...calls]).toEqual(expect.arrayContaining(['chat.postMessage', 'chat.update', 'views.open']));
  });

  it('knows the scopes of every Web API method src/bot calls', () => {
    expect([...calls].filter((method) => !Object.hasOwn(METHOD_SCOPES, method))).toEqual([]);
  });

  it('asks for every scope those calls need', () => {
    const needed = new Set([...calls].flatMap((method) => METHOD_SCOPES[method] ?? []));
    expect([...needed].filter((scope) => !manifest.oauth_config.scopes.bot.includes(scope))).toEqual([]);
  });
});
