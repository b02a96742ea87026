import type { ApprovalService } from '../../approvals/index.ts';
import type { CountersignConfig } from '../../config/index.ts';
import type { ErrorReporter, Logger } from '../../log.ts';
import type { Presenter } from '../presenter.ts';
import type { SlackGateway } from '../slack-gateway.ts';

/** What every listener may use: one use case, the presenter's private answers, the gateway for modals. */
export interface ListenerDeps {
  readonly approvals: ApprovalService;
  readonly presenter: Presenter;
  readonly gateway: SlackGateway;
  readonly config: CountersignConfig;
  readonly clock: () => number;
  readonly onError: ErrorReporter;
  /** Debug lines about clicks (which run, who). */
  readonly logger?: Logger;
}
