/**
 * Edit: the click opens the form for someone the guard lets edit this version (or says why not); the
 * form's selects redraw it (a step added, a step picked in a large plan); the submission is read
 * against the version it edits and goes through `applyEdit` — a new, untrusted plan. Field errors
 * stay in the form; anything else replaces it with the reason.
 */
import type { AllMiddlewareArgs, SlackViewMiddlewareArgs } from '@slack/bolt';
import type { ModalView } from '@slack/types';
import {
  argBlockId,
  buildEditModal,
  buildFormTooLateNotice,
  buildNotice,
  buildNoticeModal,
  EDIT_IDS,
  type EditMetadata,
  editRefusalModal,
  editResultAck,
  parseEditMetadata,
  readEditSubmission,
} from '../../../views/index.ts';
import type { ClickAnswer } from '../../approvals/index.ts';
import { selectSchema, viewSubmissionSchema } from '../payloads.ts';
import { type Click, type ClickMiddleware, clickOf, targetOf } from './click.ts';
import type { ListenerDeps } from './deps.ts';

/** `edit` on a card, an escalation message, the "plan changed" view, or a consistency warning (with a step). */
export function editClickListener(deps: ListenerDeps): ClickMiddleware {
  return async (args) => {
    const click = clickOf(args);
    const { runId, version, stepId, argPath } = targetOf(args);
    const answer = await deps.approvals.mayEdit({ runId, version, userId: click.userId });
    await click.acknowledge();
    // "Edit s3" (a consistency warning) opens the form at that step.
    const session = {
      baseVersion: version,
      added: [],
      ...(stepId === undefined ? {} : { focusStepId: stepId }),
      ...(stepId === undefined || argPath === undefined
        ? {}
        : { focusField: argBlockId(stepId, argPath.split('.')) }),
    };
    await showForm(deps, click, editView(deps, answer, click.userId, session));
  };
}

/** `add_step` and `pick_step` inside the form: the same form, redrawn for the same version. */
export function editSelectListener(
  deps: ListenerDeps,
  action: typeof EDIT_IDS.addStep | typeof EDIT_IDS.pickStep,
) {
  const listener: ClickMiddleware = async (args) => {
    const click = clickOf(args);
    const selected = selectSchema.parse(click.action).selected_option?.value;
    const parsed = parseEditMetadata(click.body.view?.private_metadata ?? '');
    if (click.body.view === undefined || !parsed.ok || selected === undefined) return;
    const { metadata } = parsed;
    const answer = await deps.approvals.mayEdit({
      runId: metadata.runId,
      version: metadata.baseVersion,
      userId: click.userId,
    });
    await click.acknowledge();
    const choice =
      action === EDIT_IDS.addStep
        ? {
            addedTool: selected,
            ...(metadata.focusStepId === undefined ? {} : { focusStepId: metadata.focusStepId }),
          }
        : { focusStepId: selected };
    await showForm(deps, click, editView(deps, answer, click.userId, { ...metadata, ...choice }));
  };
  return listener;
}

/** The edit form's submission. */
export function editSubmissionListener(deps: ListenerDeps) {
  return async (args: SlackViewMiddlewareArgs & AllMiddlewareArgs): Promise<void> => {
    const { user, view } = viewSubmissionSchema.parse(args.body);
    const time = { now: deps.clock() };
    const parsed = parseEditMetadata(view.private_metadata);
    if (!parsed.ok) {
      const notice = buildNotice({ kind: 'not_found', runId: '' }, time);
      await args.ack({ response_action: 'update', view: buildNoticeModal(notice, 'Edit plan') });
      return;
    }
    const { runId, baseVersion } = parsed.metadata;
    const answer = await deps.approvals.mayEdit({ runId, version: baseVersion, userId: user.id });
    if (!answer.ok) {
      await args.ack({
        response_action: 'update',
        view: editRefusalModal(answer.refusal, { ...time, baseVersion }),
      });
      return;
    }
    const read = readEditSubmission({
      run: answer.run,
      config: deps.config,
      stateValues: view.state.values,
      privateMetadata: view.private_metadata,
    });
    if (!read.ok) {
      await args.ack({ response_action: 'errors', errors: read.errors });
      return;
    }
    const edit = { runId, baseVersion, editorId: user.id, steps: read.steps };
    // The form must be answered within 3 s: Slack is brought up to date after the answer.
    const result = await deps.approvals.applyEdit(edit, { deferPublish: true });
    const stepIds = read.steps.map((step) => step.id ?? '');
    await args.ack(
      editResultAck(result, { ...time, baseVersion, inputBlockIds: read.inputBlockIds, stepIds }),
    );
  };
}

/** The form for the version the guard let the editor edit, or why it did not. */
function editView(
  deps: ListenerDeps,
  answer: ClickAnswer,
  editorId: string,
  session: Pick<EditMetadata, 'baseVersion' | 'added' | 'focusStepId'> & {
    readonly addedTool?: string;
    readonly focusField?: string;
  },
): ModalView {
  const now = deps.clock();
  if (!answer.ok) return editRefusalModal(answer.refusal, { now, baseVersion: session.baseVersion });
  return buildEditModal({
    run: answer.run,
    config: deps.config,
    editorId,
    added: session.added,
    focusStepId: session.focusStepId,
    addedTool: session.addedTool,
    focusField: session.focusField,
    now,
  });
}

/** A form opened from a message opens a modal; from a modal it replaces that modal in place, as Slack expects. */
async function showForm(deps: ListenerDeps, click: Click, view: ModalView): Promise<void> {
  const from = click.body.view;
  if (from !== undefined) await deps.gateway.updateModal(from.id, view, from.hash);
  else if (click.body.trigger_id !== undefined) {
    const opened = await deps.gateway.openModal(click.body.trigger_id, view);
    if (opened === 'too_late' && click.channel !== undefined)
      await deps.gateway.whisper(click.channel, click.userId, buildFormTooLateNotice('edit'));
  }
}
