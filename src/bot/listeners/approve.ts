/** `approve` (card, escalation message, diff message): one use case, and a private word when the card does not say it all. */

import { type ClickMiddleware, clickOf, targetOf } from './click.ts';
import type { ListenerDeps } from './deps.ts';

export function approveListener(deps: ListenerDeps): ClickMiddleware {
  return async (args) => {
    const click = clickOf(args);
    const { runId, version } = targetOf(args);
    // Acknowledged once the approval is committed; the listeners' work (render job, timers) follows
    // the ack — a crash in between is repaired from the run's `changed` mark (as for reject and edit).
    const result = await deps.approvals.approve(
      { runId, version, userId: click.userId },
      { deferPublish: true },
    );
    await click.acknowledge();
    await deps.presenter.answer(result, click.audience);
  };
}
