import type { AllMiddlewareArgs, App, SlackActionMiddlewareArgs, SlackViewMiddlewareArgs } from '@slack/bolt';
import {
  buildEditModal,
  buildNotice,
  buildNoticeModal,
  buildRejectModal,
  EDIT_IDS,
  editSubmissionAck,
  parseButtonValue,
  parseEditMetadata,
  REJECT_IDS,
  readEditSubmission,
  readRejectSubmission,
} from '../../views/index.ts';
import type { ApprovalService, UseCaseResult } from '../approvals/index.ts';
import type { CountersignConfig } from '../config/index.ts';
import {
  blockActionSchema,
  buttonSchema,
  channelOf,
  selectSchema,
  viewSubmissionSchema,
} from './payloads.ts';
import type { Presenter } from './presenter.ts';
import type { SlackGateway } from './slack-gateway.ts';

export interface ListenerDeps {
  readonly approvals: ApprovalService;
  readonly presenter: Presenter;
  readonly gateway: SlackGateway;
  readonly config: CountersignConfig;
  readonly clock: () => number;
  readonly onError: (error: unknown, context: string) => void;
}

type ActionArgs = SlackActionMiddlewareArgs & AllMiddlewareArgs;
type ViewArgs = SlackViewMiddlewareArgs & AllMiddlewareArgs;

const KNOWN_ACTIONS = [
  'approve',
  'reject',
  'edit',
  'remove_step',
  'revert_step',
  'discard_edit',
  'add_step',
  'pick_step',
];

/**
 * Every Slack interaction Countersign answers. Each listener acks, parses the fields it uses, calls one
 * use case and hands the result to the presenter (or, for modals, answers in the ack). No business
 * rules live here.
 */
export function registerListeners(app: App, deps: ListenerDeps): void {
  const { approvals, presenter, gateway, config, clock } = deps;
  const now = () => ({ now: clock() });

  /** Acks at once (Slack allows 3 s), then does the work; a failure is logged and the clicker told. */
  const onClick = (name: string, work: (click: Click) => Promise<void>) => async (args: ActionArgs) => {
    await args.ack();
    const body = blockActionSchema.parse(args.body);
    const click: Click = { body, action: args.action, userId: body.user.id, channel: channelOf(body) };
    try {
      await work(click);
    } catch (error) {
      deps.onError(error, `${name} by ${click.userId}`);
      if (click.channel !== undefined) {
        await gateway
          .whisper(click.channel, click.userId, {
            text: 'Countersign could not finish handling that click. Check the card before trying again.',
            blocks: [],
          })
          .catch((whisperError: unknown) => deps.onError(whisperError, 'telling the user about an error'));
      }
    }
  };

  /** The run and version a card or diff button points at, or a private refusal. */
  const target = async (click: Click) => {
    const parsed = parseButtonValue(buttonSchema.parse(click.action).value);
    if (!parsed.ok) {
      await refuse(click, { kind: 'not_found', runId: '' });
      return undefined;
    }
    return parsed.value;
  };
  const refuse = async (click: Click, result: UseCaseResult) => {
    if (click.channel !== undefined)
      await gateway.whisper(click.channel, click.userId, buildNotice(result, now()));
  };
  const audience = (click: Click) => ({
    userId: click.userId,
    ...(click.channel === undefined ? {} : { channel: click.channel }),
  });

  app.action(
    'approve',
    onClick('approve', async (click) => {
      const value = await target(click);
      if (value === undefined) return;
      const result = await approvals.approve({
        runId: value.runId,
        version: value.version,
        userId: click.userId,
      });
      await presenter.present(result, audience(click));
    }),
  );

  for (const action of ['remove_step', 'revert_step', 'discard_edit'] as const) {
    app.action(
      action,
      onClick(action, async (click) => {
        const value = await target(click);
        if (value === undefined) return;
        const result = await approvals.applyDiffAction({
          runId: value.runId,
          version: value.version,
          userId: click.userId,
          action,
          ...(value.stepId === undefined ? {} : { stepId: value.stepId }),
        });
        await presenter.present(result, audience(click));
      }),
    );
  }

  app.action(
    'reject',
    onClick('reject', async (click) => {
      const value = await target(click);
      if (value === undefined || click.body.trigger_id === undefined) return;
      // Refused at the click, not after the form is filled in: decided, expired, stale, or no rights here.
      const answer = await approvals.mayReject({ ...value, userId: click.userId });
      if (!answer.ok) return presenter.present(answer.refusal, audience(click));
      const { run } = answer;
      await gateway.openModal(
        click.body.trigger_id,
        buildRejectModal({ runId: run.runId, version: run.version, agent: run.agent }),
      );
    }),
  );

  app.action(
    'edit',
    onClick('edit', async (click) => {
      const value = await target(click);
      if (value === undefined || click.body.trigger_id === undefined) return;
      const run = await approvals.getRun(value.runId);
      if (run === undefined) return refuse(click, { kind: 'not_found', runId: value.runId });
      // The modal itself says when the version is stale or the run decided (nothing is merged).
      const modal = buildEditModal({
        run,
        config,
        editorId: click.userId,
        baseVersion: value.version,
        ...now(),
      });
      // From a modal ("the plan changed — edit version 3"), the form replaces it in place, as Slack expects.
      const from = click.body.view;
      if (from === undefined) await gateway.openModal(click.body.trigger_id, modal);
      else await gateway.updateModal(from.id, modal, from.hash);
    }),
  );

  // Selects inside the edit modal redraw it: a step added, or a step picked in a large plan.
  for (const action of [EDIT_IDS.addStep, EDIT_IDS.pickStep] as const) {
    app.action(
      action,
      onClick(action, async (click) => {
        const view = click.body.view;
        const selected = selectSchema.parse(click.action).selected_option?.value;
        const metadata = parseEditMetadata(view?.private_metadata ?? '');
        if (view === undefined || !metadata.ok || selected === undefined) return;
        const run = await approvals.getRun(metadata.metadata.runId);
        if (run === undefined) return;
        await gateway.updateModal(
          view.id,
          buildEditModal({
            run,
            config,
            editorId: click.userId,
            baseVersion: metadata.metadata.baseVersion,
            added: metadata.metadata.added,
            ...(action === EDIT_IDS.addStep ? { addedTool: selected } : { focusStepId: selected }),
            ...(action === EDIT_IDS.addStep && metadata.metadata.focusStepId !== undefined
              ? { focusStepId: metadata.metadata.focusStepId }
              : {}),
            ...now(),
          }),
          view.hash,
        );
      }),
    );
  }

  // Anything else (an old message's button, a forged action id): acknowledged, nothing happens.
  app.action({ action_id: new RegExp(`^(?!(${KNOWN_ACTIONS.join('|')})$)`) }, async ({ ack }) => {
    await ack();
  });

  app.view(EDIT_IDS.callbackId, async (args: ViewArgs) => {
    const { user, view } = viewSubmissionSchema.parse(args.body);
    const metadata = parseEditMetadata(view.private_metadata);
    const run = metadata.ok ? await approvals.getRun(metadata.metadata.runId) : undefined;
    const context = { run, config, editorId: user.id, privateMetadata: view.private_metadata, ...now() };
    if (run === undefined) {
      await args.ack(
        editSubmissionAck({ kind: 'not_found', runId: metadata.ok ? metadata.metadata.runId : '' }, context),
      );
      return;
    }
    const read = readEditSubmission({
      run,
      config,
      stateValues: view.state.values,
      privateMetadata: view.private_metadata,
    });
    if (!read.ok) {
      await args.ack(editSubmissionAck(read, context));
      return;
    }
    const result = await approvals.applyEdit({
      runId: read.runId,
      baseVersion: read.baseVersion,
      editorId: user.id,
      steps: read.steps,
    });
    await args.ack(
      editSubmissionAck(result, { ...context, run: result.kind === 'edited' ? result.run : run }),
    );
    if (result.kind === 'edited') await presentSafely(result, user.id);
  });

  app.view(REJECT_IDS.callbackId, async (args: ViewArgs) => {
    const { user, view } = viewSubmissionSchema.parse(args.body);
    const read = readRejectSubmission({
      stateValues: view.state.values,
      privateMetadata: view.private_metadata,
    });
    if (!read.ok) {
      await args.ack({ response_action: 'errors', errors: { ...read.errors } });
      return;
    }
    const result = await approvals.reject({
      runId: read.runId,
      version: read.version,
      userId: user.id,
      reason: read.reason,
    });
    if (result.kind === 'rejected') await args.ack();
    else
      await args.ack({
        response_action: 'update',
        view: buildNoticeModal(buildNotice(result, now()), 'Reject plan'),
      });
    await presentSafely(result, user.id);
  });

  async function presentSafely(result: UseCaseResult, userId: string): Promise<void> {
    try {
      await presenter.present(result, { userId });
    } catch (error) {
      deps.onError(error, `showing the result of ${userId}'s submission`);
    }
  }
}

interface Click {
  readonly body: ReturnType<typeof blockActionSchema.parse>;
  /** The element used, as Bolt passes it (a button's value or a select's option). */
  readonly action: unknown;
  readonly userId: string;
  readonly channel: string | undefined;
}
