/**
 * Answers the person who acted, privately, when the card alone does not say it all: a refusal (stale,
 * decided, no rights), a partial approval, a plan an edit made invalid. What Slack shows of a run
 * itself is the renderer's (src/bot/renderer.ts), driven by what approvals committed.
 */
import { buildNotice } from '../../views/index.ts';
import type { UseCaseResult } from '../approvals/index.ts';
import type { SlackGateway } from './slack-gateway.ts';

/** Who caused a result and where, so refusals can be answered privately in the right place. */
export interface Audience {
  readonly userId?: string;
  readonly channel?: string;
}

export class Presenter {
  constructor(
    private readonly deps: {
      readonly gateway: SlackGateway;
      readonly clock: () => number;
      readonly tz?: string;
    },
  ) {}

  /** A private answer to the person who acted, when the card does not say it all. */
  async answer(result: UseCaseResult, audience: Audience): Promise<void> {
    switch (result.kind) {
      case 'pending':
      case 'approved':
      case 'rejected':
      case 'expired':
      case 'edited':
      case 'escalated':
      case 'reminded':
      case 'duplicate':
        return;
      default: {
        if (audience.userId === undefined || audience.channel === undefined) return;
        const time = { now: this.deps.clock(), ...(this.deps.tz === undefined ? {} : { tz: this.deps.tz }) };
        await this.deps.gateway.whisper(audience.channel, audience.userId, buildNotice(result, time));
      }
    }
  }
}
