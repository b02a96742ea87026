/**
 * Renders what approvals decided, in Slack. `show` takes every committed result (the service's
 * `onCommitted` listener) and brings the run's messages up to date: the card (posted once, updated in
 * place), the diff message of an edit, the escalation and reminder messages, and the decided state on
 * every message of the run. `answer` tells the person who clicked, privately, what their click came to
 * when the card alone does not say it (a refusal, a partial approval). Each result kind is rendered in
 * exactly one place, and nothing here decides anything: it renders the answers it is given.
 */
import {
  buildApprovalCard,
  buildDiffMessage,
  buildEscalationMessage,
  buildNotice,
  type EscalationStepLabel,
} from '../../views/index.ts';
import type { ApprovalQueries, ApprovalService } from '../approvals/index.ts';
import {
  type ChainStep,
  chainStepKey,
  type EscalationTarget,
  escalationTarget,
  type MessageLedger,
  type MessageRef,
  messageName,
  parseMessageName,
  type RunView,
  type StoredVersion,
  type UseCaseResult,
} from '../approvals/index.ts';
import type { CountersignConfig } from '../config/index.ts';
import { CountersignError, diffPlans } from '../pipeline/index.ts';
import type { CardLedger, SlackGateway } from './slack-gateway.ts';

/** Who caused a result and where, so refusals can be answered privately in the right place. */
export interface Audience {
  readonly userId?: string;
  readonly channel?: string;
}

export interface PresenterDeps {
  readonly runs: Pick<ApprovalQueries, 'getVersion' | 'getOutcomes'>;
  readonly messages: MessageLedger;
  readonly gateway: SlackGateway;
  readonly config: CountersignConfig;
  readonly clock: () => number;
  readonly tz?: string;
  /** Failures that reach no user (an escalation message that could not be posted). */
  readonly onError?: (error: unknown, context: string) => void;
}

export class Presenter {
  constructor(private readonly deps: PresenterDeps) {}

  /** The ledger the gateway uses to post each run's card at most once. */
  static ledger(approvals: Pick<ApprovalService, 'recordPosted'>, messages: MessageLedger): CardLedger {
    return {
      cardOf: async (runId) => (await messages.all(runId))[messageName({ kind: 'card' })],
      recordCard: (runId, version, ref) => approvals.recordPosted({ runId, version, ...ref }),
    };
  }

  /** Brings Slack up to date with a committed result. */
  async show(result: UseCaseResult): Promise<void> {
    switch (result.kind) {
      case 'pending':
      case 'awaiting':
        await this.showCard(result.run);
        return;
      case 'escalated':
        await this.showCard(result.run);
        await this.showChainStep(result.run, result.step);
        return;
      case 'reminded':
        await this.showChainStep(result.run, { kind: 'remind' });
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
      case 'invalid':
        // A re-check that failed at approval: the card says why.
        if (result.run !== undefined) await this.showCard(result.run);
        return;
      default:
        return;
    }
  }

  /**
   * Posts a pending run's card if none was ever recorded (a process that died between storing a run
   * and posting it: a retried submission, reconciliation at start). A recorded card is left alone.
   */
  async ensureCard(run: RunView): Promise<void> {
    if (run.status !== 'pending') return;
    if ((await this.deps.messages.all(run.runId))[messageName({ kind: 'card' })] === undefined) {
      await this.showCard(run);
    }
  }

  /** A private answer to the person who acted, when the card does not say it all. */
  async answer(result: UseCaseResult, audience: Audience): Promise<void> {
    switch (result.kind) {
      case 'pending':
      case 'approved':
      case 'rejected':
      case 'expired':
      case 'edited':
      case 'escalated':
      case 'reminded':
      case 'duplicate':
        return;
      default:
        if (audience.userId === undefined || audience.channel === undefined) return;
        await this.deps.gateway.whisper(audience.channel, audience.userId, buildNotice(result, this.time()));
    }
  }

  /** Posts or updates the run's card in its agent's channel. */
  async showCard(run: RunView): Promise<MessageRef> {
    const channel = this.deps.config.agents[run.agent]?.channel;
    if (channel === undefined)
      throw new CountersignError('not_configured', `agent ${run.agent} has no channel configured`);
    const outcomes = run.status === 'approved' ? await this.deps.runs.getOutcomes(run.runId) : [];
    const message = buildApprovalCard({ run, config: this.deps.config, outcomes, ...this.time() });
    return this.deps.gateway.showCard({ runId: run.runId, version: run.version, channel, message });
  }

  /** A new version: the card shows it, the thread gets the diff, older diff messages point to it. */
  private async showEdit(result: Extract<UseCaseResult, { kind: 'edited' }>): Promise<void> {
    const card = await this.showCard(result.run);
    await this.refreshThread(result.run);
    const posted = await this.deps.gateway.reply(
      card,
      this.diffMessage(result.run, result.previous, result.run.current),
    );
    await this.deps.messages.record(result.run.runId, { kind: 'diff', version: result.run.version }, posted);
  }

  /**
   * A chain step fired: the people it notifies get the escalation message by DM and/or in the level's
   * channel — the reminder goes to the card's channel — each recorded, so a decision or an edit updates
   * it. Targets already recorded are skipped (a retried step posts only what is missing). One failing
   * target (an unknown user, a channel the bot is not in) does not stop the others and is reported, not
   * thrown: the Web API client has retried it already.
   */
  private async showChainStep(run: RunView, step: ChainStep): Promise<void> {
    const target = escalationTarget(this.deps.config, run.agent, step);
    const message = this.escalationMessage(run, run.current, target);
    const recorded = await this.deps.messages.all(run.runId);
    const { channel: targetChannel } = target;
    const opens = target.notified.map((user) => () => this.deps.gateway.openDm([user]));
    if (targetChannel !== undefined) opens.push(async () => targetChannel);
    for (const open of opens) {
      try {
        const channel = await open();
        const name = { kind: 'escalation', version: run.version, step, channel } as const;
        if (recorded[messageName(name)] !== undefined) continue;
        const posted = await this.deps.gateway.post(channel, message);
        await this.deps.messages.record(run.runId, name, posted);
      } catch (error) {
        const report = this.deps.onError ?? ((e, context) => console.error(`countersign: ${context}:`, e));
        report(error, `posting the ${chainStepKey(step)} escalation message of run ${run.runId}`);
      }
    }
  }

  private escalationMessage(run: RunView, version: StoredVersion, target: EscalationTarget) {
    const cardChannel = this.deps.config.agents[run.agent]?.channel;
    const label: EscalationStepLabel =
      target.step.kind === 'remind'
        ? { kind: 'reminder' }
        : { kind: 'escalation', level: target.step.level, repeat: target.step.repeat };
    return buildEscalationMessage({
      run,
      version,
      step: label,
      notified: target.notified,
      ...(target.group === undefined ? {} : { group: target.group }),
      ...(target.may === undefined ? {} : { may: target.may }),
      ...(cardChannel === undefined ? {} : { cardChannel }),
      config: this.deps.config,
      ...this.time(),
    });
  }

  private diffMessage(run: RunView, previous: StoredVersion, current: StoredVersion) {
    return buildDiffMessage({
      runId: run.runId,
      previous,
      current,
      diff: diffPlans(previous.plan, current.plan),
      editorId: current.createdBy,
      config: this.deps.config,
      run,
      ...this.time(),
    });
  }

  /**
   * Re-renders every message of the run besides the card — diff messages and escalation messages —
   * against its present state: superseded or decided, without buttons.
   */
  private async refreshThread(run: RunView): Promise<void> {
    const live = (version: number) => version === run.version && run.status === 'pending';
    for (const [text, ref] of Object.entries(await this.deps.messages.all(run.runId))) {
      const name = parseMessageName(text);
      if (name === undefined || name.kind === 'card' || live(name.version)) continue;
      const shown =
        name.version === run.version ? run.current : await this.deps.runs.getVersion(run.runId, name.version);
      if (shown === undefined) continue;
      if (name.kind === 'escalation') {
        const target = escalationTarget(this.deps.config, run.agent, name.step);
        await this.deps.gateway.update(ref, this.escalationMessage(run, shown, target));
        continue;
      }
      const previous =
        shown.baseVersion === undefined
          ? undefined
          : await this.deps.runs.getVersion(run.runId, shown.baseVersion);
      if (previous !== undefined) await this.deps.gateway.update(ref, this.diffMessage(run, previous, shown));
    }
  }

  private time(): { now: number; tz?: string } {
    return { now: this.deps.clock(), ...(this.deps.tz === undefined ? {} : { tz: this.deps.tz }) };
  }
}
