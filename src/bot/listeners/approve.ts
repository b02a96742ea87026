/** `approve` (card, escalation message, diff message): one use case, and a private word when the card does not say it all. */

import { type ClickMiddleware, clickOf, targetOf } from './click.ts';
import type { ListenerDeps } from './deps.ts';

export function approveListener(deps: ListenerDeps): ClickMiddleware {
  return async (args) => {
    const click = clickOf(args);
    const { runId, version } = targetOf(args);
    const result = await deps.approvals.approve({ runId, version, userId: click.userId });
    await click.acknowledge();
    await deps.presenter.answer(result, click.audience);
  };
}
