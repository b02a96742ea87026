import { buildApprovalCard, buildDiffMessage, buildNotice } from '../../views/index.ts';
import type { ApprovalService, RunView, UseCaseResult } from '../approvals/index.ts';
import type { CountersignConfig } from '../config/index.ts';
import { diffPlans } from '../pipeline/index.ts';
import type { Metrics } from './metrics.ts';
import type { CardLedger, MessageRef, SlackGateway } from './slack-gateway.ts';

/** Who caused a result and where, so refusals can be answered privately in the right place. */
export interface Audience {
  readonly userId?: string;
  readonly channel?: string;
}

/**
 * Turns use-case results into what people see in Slack: the card (posted once, updated in place), the
 * diff message in its thread, decided states on every message of the run, and private notices for
 * refusals. Listeners, the intake worker and timers all hand their results here, so each result kind
 * is rendered in exactly one place.
 */
export class Presenter {
  constructor(
    private readonly deps: {
      readonly approvals: ApprovalService;
      readonly gateway: SlackGateway;
      readonly config: CountersignConfig;
      readonly metrics: Metrics;
      readonly clock: () => number;
      readonly tz?: string;
    },
  ) {}

  /** The ledger the gateway uses to post each run's card at most once. */
  static ledger(approvals: ApprovalService): CardLedger {
    return {
      cardOf: async (runId) => (await approvals.messages(runId)).card,
      recordCard: (runId, version, ref) => approvals.recordPosted({ runId, version, ...ref }),
    };
  }

  /** Renders one use-case result. */
  async present(result: UseCaseResult, audience: Audience = {}): Promise<void> {
    this.deps.metrics.observe(result);
    switch (result.kind) {
      case 'pending':
      case 'escalated':
        await this.showCard(result.run);
        return;
      case 'awaiting':
        await this.showCard(result.run);
        await this.whisper(result, audience);
        return;
      case 'approved':
      case 'rejected':
      case 'expired':
        await this.showCard(result.run);
        await this.refreshThread(result.run);
        return;
      case 'edited':
        await this.showEdit(result);
        return;
      case 'duplicate':
        // A retried submission: make sure its card exists (the gateway never posts it twice).
        if (result.run.status === 'pending') await this.showCard(result.run);
        return;
      default:
        await this.whisper(result, audience);
    }
  }

  /** Posts or updates the run's card in its agent's channel. */
  async showCard(run: RunView): Promise<MessageRef> {
    const channel = this.deps.config.agents[run.agent]?.channel;
    if (channel === undefined) throw new Error(`agent ${run.agent} has no channel configured`);
    const outcomes = run.status === 'approved' ? await this.deps.approvals.getOutcomes(run.runId) : [];
    const message = buildApprovalCard({
      run,
      config: this.deps.config,
      escalatedTo: run.escalatedTo,
      outcomes,
      ...this.time(),
    });
    return this.deps.gateway.showCard({ runId: run.runId, version: run.version, channel, message });
  }

  /** A new version: the card shows it, the thread gets the diff, older diff messages point to it. */
  private async showEdit(result: Extract<UseCaseResult, { kind: 'edited' }>): Promise<void> {
    const card = await this.showCard(result.run);
    await this.refreshThread(result.run);
    const message = buildDiffMessage({
      runId: result.run.runId,
      previous: result.previous,
      current: result.run.current,
      diff: result.diff,
      editorId: result.run.current.createdBy,
      config: this.deps.config,
      run: result.run,
      ...this.time(),
    });
    const posted = await this.deps.gateway.reply(card, message);
    await this.deps.approvals.recordMessage(result.run.runId, `diff:v${result.run.version}`, posted);
  }

  /** Re-renders every diff message of the run against its present state (buttons gone once past). */
  private async refreshThread(run: RunView): Promise<void> {
    const messages = await this.deps.approvals.messages(run.runId);
    for (const [name, ref] of Object.entries(messages)) {
      const version = /^diff:v(\d+)$/.exec(name)?.[1];
      if (version === undefined || (Number(version) === run.version && run.status === 'pending')) continue;
      const current = await this.deps.approvals.getVersion(run.runId, Number(version));
      const previous =
        current?.baseVersion === undefined
          ? undefined
          : await this.deps.approvals.getVersion(run.runId, current.baseVersion);
      if (current === undefined || previous === undefined) continue;
      await this.deps.gateway.update(
        ref,
        buildDiffMessage({
          runId: run.runId,
          previous,
          current,
          diff: diffPlans(previous.plan, current.plan),
          editorId: current.createdBy,
          config: this.deps.config,
          run,
          ...this.time(),
        }),
      );
    }
  }

  /** A private answer to the person who clicked: refusals say why and that nothing changed. */
  private async whisper(result: UseCaseResult, audience: Audience): Promise<void> {
    if (audience.userId === undefined || audience.channel === undefined) return;
    await this.deps.gateway.whisper(audience.channel, audience.userId, buildNotice(result, this.time()));
  }

  private time(): { now: number; tz?: string } {
    return { now: this.deps.clock(), ...(this.deps.tz === undefined ? {} : { tz: this.deps.tz }) };
  }
}
