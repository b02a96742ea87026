/**
 * Reject: the click opens the reason form only for someone the guard lets reject (decided, expired,
 * stale or no rights are answered at the click); the submission rejects — decided again by the
 * service — and the form closes, or shows why it could not.
 */
import type { AllMiddlewareArgs, SlackViewMiddlewareArgs } from '@slack/bolt';
import {
  buildFormTooLateNotice,
  buildNotice,
  buildNoticeModal,
  buildRejectModal,
  readRejectSubmission,
} from '../../../views/index.ts';
import { viewSubmissionSchema } from '../payloads.ts';
import { type ClickMiddleware, clickOf, targetOf } from './click.ts';
import type { ListenerDeps } from './deps.ts';

export function rejectClickListener(deps: ListenerDeps): ClickMiddleware {
  return async (args) => {
    const click = clickOf(args);
    const target = targetOf(args);
    if (click.body.trigger_id === undefined) return;
    const answer = await deps.approvals.mayReject({ ...target, userId: click.userId });
    await click.acknowledge(); // the check may have committed (an expiry); the form opens after
    if (!answer.ok) return deps.presenter.answer(answer.refusal, click.audience);
    const { run } = answer;
    const opened = await deps.gateway.openModal(
      click.body.trigger_id,
      buildRejectModal({ runId: run.runId, version: run.version, agent: run.agent }),
    );
    if (opened === 'too_late' && click.channel !== undefined)
      await deps.gateway.whisper(click.channel, click.userId, buildFormTooLateNotice('reject'));
  };
}

export function rejectSubmissionListener(deps: ListenerDeps) {
  return async (args: SlackViewMiddlewareArgs & AllMiddlewareArgs): Promise<void> => {
    const { user, view } = viewSubmissionSchema.parse(args.body);
    const read = readRejectSubmission({
      stateValues: view.state.values,
      privateMetadata: view.private_metadata,
    });
    if (!read.ok) {
      await args.ack({ response_action: 'errors', errors: { ...read.errors } });
      return;
    }
    const input = { runId: read.runId, version: read.version, userId: user.id, reason: read.reason };
    // The form must be answered within 3 s: Slack is brought up to date after the answer.
    const result = await deps.approvals.reject(input, { deferPublish: true });
    if (result.kind === 'rejected') await args.ack();
    else
      await args.ack({
        response_action: 'update',
        view: buildNoticeModal(buildNotice(result, { now: deps.clock() }), 'Reject plan'),
      });
  };
}
