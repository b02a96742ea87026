import { z } from 'zod';

/**
 * The fields of Slack's interaction payloads the listeners read, parsed leniently (Slack sends many
 * more, and may add fields at any time). See test/fixtures/slack-protocol for the full shapes.
 */

const user = z.object({ id: z.string() });

/** A click on a button or a select, in a message (card, diff, escalation) or in a modal. */
export const blockActionSchema = z.object({
  user,
  trigger_id: z.string().optional(),
  channel: z.object({ id: z.string() }).optional(),
  container: z.object({ channel_id: z.string().optional() }).loose().optional(),
  view: z
    .object({ id: z.string(), hash: z.string().optional(), private_metadata: z.string().default('') })
    .loose()
    .optional(),
});

export const buttonSchema = z.object({ action_id: z.string(), value: z.string().default('') }).loose();
export const selectSchema = z
  .object({ action_id: z.string(), selected_option: z.object({ value: z.string() }).nullable().optional() })
  .loose();

/** A modal submitted. */
export const viewSubmissionSchema = z.object({
  user,
  view: z
    .object({
      id: z.string(),
      callback_id: z.string(),
      private_metadata: z.string().default(''),
      state: z.object({ values: z.record(z.string(), z.record(z.string(), z.unknown())) }),
    })
    .loose(),
});

export type BlockAction = z.output<typeof blockActionSchema>;

/** Where to answer a click privately: the channel of the message clicked. */
export function channelOf(action: BlockAction): string | undefined {
  return action.channel?.id ?? action.container?.channel_id;
}
