/**
 * The inbox in Slack: the App Home tab, published when a person opens it, and the `/countersign`
 * command (`pending`, `show <run id>`, `help`), answered privately through the command's response_url.
 * Approvals decides what waits for whom (`inboxFor`, `inboxEntryFor`); views render it.
 */
import type { App } from '@slack/bolt';
import {
  buildCommandHelp,
  buildPendingAnswer,
  buildRunAnswer,
  type SlackMessage,
} from '../../../views/index.ts';
import type { ApprovalService } from '../../approvals/index.ts';
import type { ErrorReporter } from '../../log.ts';
import { RUN_ID_PATTERN } from '../../pipeline/index.ts';
import { type CardLinkCache, type HomePublisher, inboxRunIds } from '../app-home.ts';

export interface InboxListenerDeps {
  readonly approvals: Pick<ApprovalService, 'inboxFor' | 'inboxEntryFor'>;
  readonly homes: Pick<HomePublisher, 'publish'>;
  readonly links: Pick<CardLinkCache, 'linksOf'>;
  readonly clock: () => number;
  readonly tz?: string;
  readonly onError: ErrorReporter;
}

/** The slash command's name, as in manifest.json. */
export const SLASH_COMMAND = '/countersign';

/** What a person asked `/countersign` for. */
export type CountersignCommand =
  | { readonly kind: 'pending' }
  | { readonly kind: 'show'; readonly runId: string }
  | { readonly kind: 'help'; readonly unknown?: string };

/** Reads the command's text: `pending`, `show <run id>`, `help`; anything else is help naming it. */
export function parseCountersignCommand(text: string): CountersignCommand {
  const words = text
    .trim()
    .split(/\s+/)
    .filter((word) => word !== '');
  const [verb, ...rest] = words;
  switch (verb?.toLowerCase()) {
    case undefined:
    case 'help':
      return { kind: 'help' };
    case 'pending':
      return rest.length === 0 ? { kind: 'pending' } : { kind: 'help', unknown: text.trim() };
    case 'show':
      return rest.length === 1 && rest[0] !== undefined
        ? { kind: 'show', runId: rest[0] }
        : { kind: 'help', unknown: text.trim() };
    default:
      return { kind: 'help', unknown: text.trim() };
  }
}

export function registerInboxListeners(app: App, deps: InboxListenerDeps): void {
  app.event('app_home_opened', async ({ event }) => {
    if (event.tab !== 'home') return;
    await deps.homes.publish(event.user, { force: true });
  });

  app.command(SLASH_COMMAND, async ({ command, ack, respond }) => {
    await ack();
    let answer: SlackMessage;
    try {
      answer = await commandAnswer(deps, command.user_id, parseCountersignCommand(command.text));
    } catch (error) {
      deps.onError(error, `answering ${SLASH_COMMAND}`, { user: command.user_id });
      answer = {
        text: 'Countersign could not answer',
        blocks: [
          {
            type: 'section',
            text: {
              type: 'mrkdwn',
              text: 'Countersign could not read the plans just now. Try again in a moment.',
            },
          },
        ],
      };
    }
    await respond({ response_type: 'ephemeral', text: answer.text, blocks: [...answer.blocks] });
  });
}

async function commandAnswer(
  deps: InboxListenerDeps,
  userId: string,
  command: CountersignCommand,
): Promise<SlackMessage> {
  const time = { now: deps.clock(), ...(deps.tz === undefined ? {} : { tz: deps.tz }) };
  switch (command.kind) {
    case 'help':
      return buildCommandHelp(command.unknown);
    case 'pending': {
      const inbox = await deps.approvals.inboxFor(userId);
      const links = await deps.links.linksOf(inboxRunIds(inbox));
      return buildPendingAnswer({ inbox, links, ...time });
    }
    case 'show': {
      const entry = RUN_ID_PATTERN.test(command.runId)
        ? await deps.approvals.inboxEntryFor(command.runId, userId)
        : undefined;
      const links = entry === undefined ? {} : await deps.links.linksOf([entry.runId]);
      return buildRunAnswer(command.runId, entry, { links, ...time });
    }
  }
}
