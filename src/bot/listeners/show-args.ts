/**
 * `show_args`: the full arguments of a step whose card shows its change set instead. Someone who may
 * look the run up gets a modal with the arguments of the version the button was drawn for; anyone else
 * is answered privately. Reading changes nothing, so nothing is committed before the answer.
 */
import { buildArgumentsModal, buildFormTooLateNotice } from '../../../views/index.ts';
import { type ClickMiddleware, clickOf, targetOf } from './click.ts';
import type { ListenerDeps } from './deps.ts';

export function showArgsListener(deps: ListenerDeps): ClickMiddleware {
  return async (args) => {
    const click = clickOf(args);
    const { runId, version, stepId } = targetOf(args);
    if (click.body.trigger_id === undefined) return;
    const answer = await deps.approvals.stepArgumentsFor({ runId, version, stepId, userId: click.userId });
    await click.acknowledge();
    if (!answer.ok) return deps.presenter.answer(answer.refusal, click.audience);
    const view = buildArgumentsModal({ runId, ...answer, config: deps.config });
    const opened = await deps.gateway.openModal(click.body.trigger_id, view);
    if (opened === 'too_late' && click.channel !== undefined)
      await deps.gateway.whisper(click.channel, click.userId, buildFormTooLateNotice('arguments'));
  };
}
