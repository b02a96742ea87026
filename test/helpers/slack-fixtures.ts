/** Loads the Slack protocol fixtures in test/fixtures/slack-protocol (see its README). */
import { readFileSync } from 'node:fs';

/** The fixture files, without `.json`. */
export type SlackFixtureName =
  | 'block_actions.message'
  | 'block_actions.view'
  | 'state_values'
  | 'view_closed'
  | 'view_submission'
  | 'web_api_responses';

/** A parsed fixture: plain JSON, to compare against or index with a zod schema. */
export function slackFixture(name: SlackFixtureName): { readonly [key: string]: unknown } {
  const url = new URL(`../fixtures/slack-protocol/${name}.json`, import.meta.url);
  const parsed: unknown = JSON.parse(readFileSync(url, 'utf8'));
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new Error(`fixture ${name} is not a JSON object`);
  }
  return { ...parsed };
}
