/** The diff message's partial keeps: `remove_step`, `revert_step`, `discard_edit` — each a new version. */
import type { DiffAction } from '../../approvals/index.ts';
import { type ClickMiddleware, clickOf, targetOf } from './click.ts';
import type { ListenerDeps } from './deps.ts';

export const DIFF_ACTIONS: readonly DiffAction[] = ['remove_step', 'revert_step', 'discard_edit'];

export function diffActionListener(deps: ListenerDeps, action: DiffAction): ClickMiddleware {
  return async (args) => {
    const click = clickOf(args);
    const target = targetOf(args);
    const result = await deps.approvals.applyDiffAction({
      runId: target.runId,
      version: target.version,
      userId: click.userId,
      action,
      ...(target.stepId === undefined ? {} : { stepId: target.stepId }),
    });
    await click.acknowledge();
    await deps.presenter.answer(result, click.audience);
  };
}
