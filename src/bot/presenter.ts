import {
  buildApprovalCard,
  buildDiffMessage,
  buildEscalationMessage,
  buildNotice,
  type EscalationStepLabel,
} from '../../views/index.ts';
import type { ApprovalService, RunView, StoredVersion, UseCaseResult } from '../approvals/index.ts';
import type { CountersignConfig, EscalationGrant } from '../config/index.ts';
import { diffPlans } from '../pipeline/index.ts';
import {
  type ChainStep,
  chainStepKey,
  type EscalationMessageKey,
  escalationMessageName,
  parseEscalationMessageName,
} from '../queue/timer-plan.ts';
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
      /**
       * Called with every result before it is shown: the timers reschedule an edited run and stop a
       * decided run's escalation chain here, whichever entry point (click, modal, timer) produced it.
       */
      readonly onResult?: (result: UseCaseResult) => Promise<void>;
      /** Failures that reach no user (an escalation message that could not be posted). */
      readonly onError?: (error: unknown, context: string) => void;
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
    await this.deps.onResult?.(result);
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
      case 'invalid':
        // A re-check that failed at approval: the card says why, and so does the private answer.
        if (result.run !== undefined) await this.showCard(result.run);
        await this.whisper(result, audience);
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

  /**
   * An escalation step fired (or the reminder): the level's people get the escalation message by DM
   * and/or in its channel — the reminder goes to the card's channel — and each message is recorded, so
   * a decision or an edit updates it. Targets already recorded are skipped (a retried job posts only
   * what is missing). One failing target (an unknown user, a channel the bot is not in) does not stop
   * the others and is reported, not thrown: the Web API client has retried it already, and retrying the
   * job would record the escalation again.
   */
  async showEscalation(run: RunView, step: ChainStep): Promise<void> {
    const target = this.escalationTarget(
      run.agent,
      step.kind === 'escalate' ? { level: step.level, repeat: step.repeat } : { repeat: 0 },
    );
    const message = this.escalationMessage(run, run.current, target);
    const recorded = await this.deps.approvals.messages(run.runId);
    const { channel: levelChannel } = target;
    const opens = target.notified.map((user) => () => this.deps.gateway.openDm([user]));
    if (levelChannel !== undefined) opens.push(async () => levelChannel);
    for (const open of opens) {
      try {
        const channel = await open();
        const name = escalationMessageName(run.version, chainStepKey(step), channel);
        if (recorded[name] !== undefined) continue;
        const posted = await this.deps.gateway.post(channel, message);
        await this.deps.approvals.recordMessage(run.runId, name, posted);
      } catch (error) {
        const report = this.deps.onError ?? ((e, context) => console.error(`countersign: ${context}:`, e));
        report(error, `posting the ${chainStepKey(step)} escalation message of run ${run.runId}`);
      }
    }
  }

  /**
   * Who an escalation step is for, from today's config: the level's people (DMs) and channel, or for the
   * reminder the card's channel. A level since removed from the config notifies nobody.
   */
  private escalationTarget(
    agent: string,
    key: Pick<EscalationMessageKey, 'level' | 'repeat'>,
  ): {
    label: EscalationStepLabel;
    notified: readonly string[];
    group?: string;
    channel?: string;
    may?: EscalationGrant;
  } {
    if (key.level === undefined) {
      const channel = this.deps.config.agents[agent]?.channel;
      return { label: { kind: 'reminder' }, notified: [], ...(channel === undefined ? {} : { channel }) };
    }
    const level = this.deps.config.escalation[agent]?.levels[key.level - 1];
    return {
      label: { kind: 'escalation', level: key.level, repeat: key.repeat },
      notified: level?.notify ?? [],
      ...(level?.group === undefined ? {} : { group: level.group }),
      ...(level?.channel === undefined ? {} : { channel: level.channel }),
      ...(level?.may === undefined ? {} : { may: level.may }),
    };
  }

  private escalationMessage(
    run: RunView,
    version: StoredVersion,
    target: ReturnType<Presenter['escalationTarget']>,
  ) {
    const cardChannel = this.deps.config.agents[run.agent]?.channel;
    return buildEscalationMessage({
      run,
      version,
      step: target.label,
      notified: target.notified,
      ...(target.group === undefined ? {} : { group: target.group }),
      ...(target.may === undefined ? {} : { may: target.may }),
      ...(cardChannel === undefined ? {} : { cardChannel }),
      config: this.deps.config,
      ...this.time(),
    });
  }

  /**
   * Re-renders every message of the run besides the card — diff messages and escalation messages —
   * against its present state: superseded or decided, without buttons.
   */
  private async refreshThread(run: RunView): Promise<void> {
    const messages = await this.deps.approvals.messages(run.runId);
    for (const [name, ref] of Object.entries(messages)) {
      const escalation = parseEscalationMessageName(name);
      if (escalation !== undefined) {
        if (escalation.version === run.version && run.status === 'pending') continue;
        const shown =
          escalation.version === run.version
            ? run.current
            : await this.deps.approvals.getVersion(run.runId, escalation.version);
        if (shown === undefined) continue;
        const target = this.escalationTarget(run.agent, escalation);
        await this.deps.gateway.update(ref, this.escalationMessage(run, shown, target));
        continue;
      }
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
