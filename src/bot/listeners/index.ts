/**
 * Every Slack interaction Countersign answers, each a short chain: the click middleware (click.ts),
 * then one listener that calls one use case and renders its answer. No business rules live here:
 * approvals decides, views render.
 */
import type { App } from '@slack/bolt';
import { EDIT_IDS, REJECT_IDS, SHOW_ARGS_ACTION } from '../../../views/index.ts';
import { approveListener } from './approve.ts';
import { ackClick, reportFailures, resolveTarget } from './click.ts';
import type { ListenerDeps } from './deps.ts';
import { DIFF_ACTIONS, diffActionListener } from './diff-actions.ts';
import { editClickListener, editSelectListener, editSubmissionListener } from './edit.ts';
import { rejectClickListener, rejectSubmissionListener } from './reject.ts';
import { showArgsListener } from './show-args.ts';

export type { ListenerDeps } from './deps.ts';

const KNOWN_ACTIONS = [
  'approve',
  'reject',
  'edit',
  SHOW_ARGS_ACTION,
  ...DIFF_ACTIONS,
  EDIT_IDS.addStep,
  EDIT_IDS.pickStep,
];

export function registerListeners(app: App, deps: ListenerDeps): void {
  const button = (name: string) => [ackClick, reportFailures(deps, name), resolveTarget(deps)] as const;
  app.action('approve', ...button('approve'), approveListener(deps));
  app.action('reject', ...button('reject'), rejectClickListener(deps));
  app.action('edit', ...button('edit'), editClickListener(deps));
  app.action(SHOW_ARGS_ACTION, ...button(SHOW_ARGS_ACTION), showArgsListener(deps));
  for (const action of DIFF_ACTIONS) app.action(action, ...button(action), diffActionListener(deps, action));
  for (const action of [EDIT_IDS.addStep, EDIT_IDS.pickStep] as const) {
    app.action(action, ackClick, reportFailures(deps, action), editSelectListener(deps, action));
  }
  // Anything else (an old message's button, a forged action id): acknowledged, nothing happens.
  app.action({ action_id: new RegExp(`^(?!(${KNOWN_ACTIONS.join('|')})$)`) }, async ({ ack }) => {
    await ack();
  });
  app.view(EDIT_IDS.callbackId, editSubmissionListener(deps));
  app.view(REJECT_IDS.callbackId, rejectSubmissionListener(deps));
}
