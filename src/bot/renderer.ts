/**
 * Makes Slack show what approvals committed (docs/architecture.md §9). `converge(runId)` reads the run
 * as it is now and brings every message that shows it up to date: the card (posted once, updated in
 * place), the diff message of the current version in the card's thread, the escalation and reminder
 * messages of the chain steps that fired, and the decided or superseded state on all of them. It is
 * driven by state, not by events, so running it again, late or twice changes nothing; a message
 * already showing the right content is left alone, and one that shows a newer revision is never
 * overwritten. The render queue (src/queue/render.ts) runs it once per run at a time.
 */
import { createHash } from 'node:crypto';
import {
  buildApprovalCard,
  buildDiffMessage,
  buildDuplicateNotice,
  buildEscalationMessage,
  type EscalationStepLabel,
  type PeopleNames,
} from '../../views/index.ts';
import {
  type ApprovalService,
  type ChainStep,
  chainStepKey,
  escalationTarget,
  type MessageLedger,
  type MessageLedgerEntries,
  type MessageName,
  type MessageRef,
  messageName,
  parseMessageName,
  type RunView,
  type StoredVersion,
} from '../approvals/index.ts';
import type { CountersignConfig } from '../config/index.ts';
import type { ErrorReporter } from '../log.ts';
import { CountersignError, diffPlans } from '../pipeline/index.ts';
import { firedChainSteps } from '../queue/timer-plan.ts';
import type { CardLinkCache, HomePublisher } from './app-home.ts';
import { PeopleNameCache } from './people-names.ts';
import { refusedForGood, type SlackGateway, type SlackMessage } from './slack-gateway.ts';

export interface RendererDeps {
  readonly runs: Pick<
    ApprovalService,
    | 'getRunRevision'
    | 'revisionOf'
    | 'getVersion'
    | 'getOutcomes'
    | 'recordPosted'
    | 'markShown'
    | 'changedMark'
  >;
  readonly messages: MessageLedger;
  readonly gateway: SlackGateway;
  readonly config: CountersignConfig;
  readonly clock: () => number;
  readonly tz?: string;
  /** A target Slack refuses for good (a channel the bot is not in): reported, the rest still rendered. */
  readonly onError: ErrorReporter;
  /** Card permalinks, for escalation messages ("the card" links to it). */
  readonly links?: Pick<CardLinkCache, 'linkOf'>;
  /** Told after each rendering, so the App Home of everyone the run concerns follows it. */
  readonly homes?: Pick<HomePublisher, 'runChanged'>;
}

type Ledger = MessageLedgerEntries;

/**
 * How long after a post that followed an unknown outcome Slack is searched for late copies: well past
 * the longest a request can be in flight (the Slack call timeout, 10 s by default).
 */
const VERIFY_FOR_MS = 30_000;

/** Renderings of one run in a row, at most (a run changing all the time is rendered again by the next job). */
const MAX_ROUNDS = 5;

export class Renderer {
  /** DM channel ids by user (conversations.open answers the same channel every time). */
  private readonly dms = new Map<string, string>();
  private readonly people: PeopleNameCache;

  constructor(private readonly deps: RendererDeps) {
    this.people = new PeopleNameCache(deps);
  }

  /**
   * Brings the run's Slack messages up to its current state; clears its `changed` mark when they show
   * it. A job for `revision` that an earlier rendering already covered (the run is not marked changed,
   * its card shows that revision or a later one) ends at once: a burst of commits costs one rendering.
   */
  async converge(runId: string, revision = 0): Promise<void> {
    let mark = await this.deps.runs.changedMark(runId);
    if (mark === undefined) {
      const card = (await this.deps.messages.all(runId)).recorded[messageName({ kind: 'card' })];
      if (card?.revision !== undefined && card.revision >= revision) return;
    }
    for (let round = 0; round < MAX_ROUNDS; round++) {
      if (round > 0) mark = await this.deps.runs.changedMark(runId);
      const read = await this.deps.runs.getRunRevision(runId);
      const own = read === undefined ? undefined : await this.render(read.run, read.revision);
      if (read !== undefined && round === 0) this.deps.homes?.runChanged(read.run);
      const after = read === undefined ? undefined : await this.deps.runs.revisionOf(runId);
      // Unchanged since the read — or changed only by this rendering's own record of the card's place
      // (journaled, not shown), committed right on top of what was read.
      const shown = after === read?.revision || (own === (read?.revision ?? 0) + 1 && after === own);
      if (shown) {
        // Still looking for late copies of a post: the run stays marked, so the repair loop comes back.
        const verifying = (await this.deps.messages.all(runId)).verifying.size > 0;
        if (mark !== undefined && !verifying) await this.deps.runs.markShown(runId, mark);
        return;
      }
    }
  }

  /** Renders one read of the run; answers the revision of its own record of a card it posted, if any. */
  private async render(run: RunView, revision: number): Promise<number | undefined> {
    const ledger = await this.deps.messages.all(run.runId);
    const names = await this.people.namesOf(run);
    let card: MessageRef | undefined;
    let posted: number | undefined;
    // A run approved by policy at submission never needed anyone: it has no card.
    if (run.decidedBy !== 'policy' || ledger.recorded.card !== undefined) {
      try {
        card = await this.ensureCard(run, revision, ledger, names, (committed) => {
          posted = committed;
        });
      } catch (error) {
        // A channel the bot is not in: reported; the next commit of the run tries again.
        if (refusedForGood(error) === undefined) throw error;
        this.deps.onError(error, `showing the card of run ${run.runId}`, { runId: run.runId });
      }
    }
    if (card !== undefined) await this.renderDiffs(run, revision, card, ledger, names);
    await this.renderEscalations(run, revision, ledger, names, card);
    await this.verifyPosts(run.runId, ledger);
    return posted;
  }

  /**
   * A post made after an attempt whose outcome was unknown (a timeout: the request may still land):
   * Slack is searched again until `VERIFY_FOR_MS` after it, and any late copy becomes a duplicate
   * notice pointing to the message that counts — the one recorded.
   */
  private async verifyPosts(runId: string, ledger: Ledger): Promise<void> {
    for (const [field, verification] of ledger.verifying) {
      const name = parseMessageName(field);
      const recorded = ledger.recorded[field];
      if (name === undefined || recorded === undefined) {
        if (name !== undefined) await this.deps.messages.verify(runId, name, undefined);
        continue;
      }
      const where = {
        channel: verification.channel,
        ...(verification.threadTs === undefined ? {} : { threadTs: verification.threadTs }),
      };
      const found = await this.deps.gateway.find({ ...where, tag: { runId, name: field } });
      const noticed = [...verification.noticed];
      for (const copy of found) {
        if (copy.ts === recorded.ts || noticed.includes(copy.ts)) continue;
        await this.deps.gateway.update(copy, buildDuplicateNotice(recorded.ts));
        noticed.push(copy.ts);
      }
      const over = this.deps.clock() - verification.since > VERIFY_FOR_MS;
      await this.deps.messages.verify(runId, name, over ? undefined : { ...verification, noticed });
    }
  }

  private async ensureCard(
    run: RunView,
    revision: number,
    ledger: Ledger,
    names: PeopleNames,
    onRecorded: (revision: number | undefined) => void,
  ): Promise<MessageRef> {
    const channel = this.deps.config.agents[run.agent]?.channel;
    if (channel === undefined)
      throw new CountersignError('not_configured', `agent ${run.agent} has no channel configured`);
    // What the agent reported: after approval, and for steps released before the plan was decided.
    const reported = run.status === 'approved' || Object.keys(run.released).length > 0;
    const outcomes = reported ? await this.deps.runs.getOutcomes(run.runId) : [];
    const earlierVersions = run.status === 'pending' ? await this.earlierVersions(run) : [];
    const message = buildApprovalCard({
      run,
      config: this.deps.config,
      outcomes,
      earlierVersions,
      names,
      ...this.time(),
    });
    return this.ensure(
      run,
      revision,
      ledger,
      { kind: 'card' },
      message,
      async (ref) => {
        // The card's place is journaled (`posted`), as the first thing Slack showed of the run.
        onRecorded(await this.deps.runs.recordPosted({ runId: run.runId, version: run.version, ...ref }));
      },
      { channel },
    );
  }

  /** The current version's diff message (posted once), and older ones brought to their superseded state. */
  private async renderDiffs(
    run: RunView,
    revision: number,
    card: MessageRef,
    ledger: Ledger,
    names: PeopleNames,
  ): Promise<void> {
    for (let version = 2; version <= run.version; version++) {
      const name: MessageName = { kind: 'diff', version };
      if (version < run.version && ledger.recorded[messageName(name)] === undefined) continue;
      const shown =
        version === run.version ? run.current : await this.deps.runs.getVersion(run.runId, version);
      const previous =
        shown?.baseVersion === undefined
          ? undefined
          : await this.deps.runs.getVersion(run.runId, shown.baseVersion);
      if (shown === undefined || previous === undefined) continue;
      await this.ensure(
        run,
        revision,
        ledger,
        name,
        this.diffMessage(run, previous, shown, names),
        undefined,
        {
          channel: card.channel,
          threadTs: card.ts,
        },
      );
    }
  }

  /**
   * Escalation and reminder messages: those recorded are brought to the run's state; while the run is
   * pending, each chain step that fired for the current version is posted to its people and channel.
   */
  private async renderEscalations(
    run: RunView,
    revision: number,
    ledger: Ledger,
    names: PeopleNames,
    card: MessageRef | undefined,
  ): Promise<void> {
    // The card's permalink, asked for only when there is an escalation message to show it in.
    let cardLink: Promise<string | undefined> | undefined;
    const link = () => {
      cardLink ??=
        card === undefined || this.deps.links === undefined
          ? Promise.resolve(undefined)
          : this.deps.links.linkOf(run.runId).catch(() => undefined);
      return cardLink;
    };
    for (const [text, ref] of Object.entries(ledger.recorded)) {
      const name = parseMessageName(text);
      if (name?.kind !== 'escalation') continue;
      const shown =
        name.version === run.version ? run.current : await this.deps.runs.getVersion(run.runId, name.version);
      if (shown === undefined) continue;
      await this.ensure(
        run,
        revision,
        ledger,
        name,
        this.escalationMessage(run, shown, name.step, names, await link()),
        undefined,
        {
          channel: ref.channel,
        },
      );
    }
    if (run.status !== 'pending') return;
    let retry: unknown;
    for (const step of firedChainSteps(this.deps.config.escalation[run.agent], run)) {
      const target = escalationTarget(this.deps.config, run.agent, step);
      const message = this.escalationMessage(run, run.current, step, names, await link());
      const targets = [
        ...target.notified.map((user) => ({ user })),
        ...(target.channel === undefined ? [] : [{ channel: target.channel }]),
      ];
      for (const where of targets) {
        // Named by the user for a DM until its channel is known, so a refusal is remembered either way.
        const refusal: MessageName = {
          kind: 'escalation',
          version: run.version,
          step,
          channel: 'user' in where ? where.user : where.channel,
        };
        if (ledger.refused.has(messageName(refusal))) continue;
        try {
          const channel = 'channel' in where ? where.channel : await this.dmWith(where.user);
          const name: MessageName = { kind: 'escalation', version: run.version, step, channel };
          if (ledger.recorded[messageName(name)] !== undefined) continue;
          await this.ensure(run, revision, ledger, name, message, undefined, { channel });
        } catch (error) {
          const code = refusedForGood(error);
          if (code === undefined) {
            retry ??= error;
            continue;
          }
          // Reported once: Slack will not take it (an unknown user, a channel the bot is not in).
          await this.deps.messages.refuse(run.runId, refusal, code);
          this.deps.onError(
            error,
            `posting the ${chainStepKey(step)} escalation message of run ${run.runId}`,
            { runId: run.runId },
          );
        }
      }
    }
    // A target that failed for now (5xx, 429, a timeout) fails the job: it is retried, the others are done.
    if (retry !== undefined) throw retry;
  }

  private async dmWith(user: string): Promise<string> {
    const known = this.dms.get(user);
    if (known !== undefined) return known;
    const channel = await this.deps.gateway.openDm([user]);
    this.dms.set(user, channel);
    return channel;
  }

  /**
   * One message brought to `message`: posted when there is none (after looking for one whose post
   * may have reached Slack unanswered), updated when it shows something else, left alone when it
   * shows this already or a newer revision.
   */
  private async ensure(
    run: RunView,
    revision: number,
    ledger: Ledger,
    name: MessageName,
    message: SlackMessage,
    onPosted: ((ref: MessageRef) => Promise<void>) | undefined,
    where: { readonly channel: string; readonly threadTs?: string },
  ): Promise<MessageRef> {
    const field = messageName(name);
    const digest = createHash('sha256').update(JSON.stringify(message)).digest('hex').slice(0, 32);
    const recorded = ledger.recorded[field];
    if (recorded !== undefined) {
      if (recorded.digest === digest || (recorded.revision ?? 0) > revision) return recorded;
      try {
        await this.deps.gateway.update(recorded, message);
        const ref = { channel: recorded.channel, ts: recorded.ts, digest, revision };
        await this.deps.messages.record(run.runId, name, ref);
        return ref;
      } catch (error) {
        // Someone deleted the message: it is posted again, below.
        if (refusedForGood(error) !== 'message_not_found') throw error;
        await this.deps.messages.forget(run.runId, name);
      }
    }
    const tag = { runId: run.runId, name: field };
    if (ledger.pending.has(field)) {
      // A post that may have reached Slack without an answer: find it (and any duplicate) first.
      const [first, ...duplicates] = await this.deps.gateway.find({ ...where, tag });
      if (first !== undefined) {
        for (const duplicate of duplicates)
          await this.deps.gateway.update(duplicate, buildDuplicateNotice(first.ts));
        await this.deps.gateway.update(first, message);
        const ref = { ...first, digest, revision };
        await this.deps.messages.record(run.runId, name, ref);
        await onPosted?.(ref);
        return ref;
      }
    }
    await this.deps.messages.beginPost(run.runId, name, this.deps.clock());
    const posted = await this.deps.gateway.post({ ...where, message, tag });
    const ref = { ...posted, digest, revision };
    await this.deps.messages.record(run.runId, name, ref);
    if (ledger.pending.has(field)) {
      // The earlier attempt is not in Slack (yet): if it timed out rather than failed, it may still
      // land — look again for a while.
      await this.deps.messages.verify(run.runId, name, { since: this.deps.clock(), ...where, noticed: [] });
    }
    await onPosted?.(ref);
    return ref;
  }

  /** The agent's version and the one the current version was edited from: the card's consistency warnings compare with them. */
  private async earlierVersions(run: RunView): Promise<StoredVersion[]> {
    const wanted = [...new Set([1, run.current.baseVersion ?? run.version])].filter((v) => v < run.version);
    const versions = await Promise.all(
      wanted.map((version) => this.deps.runs.getVersion(run.runId, version)),
    );
    return versions.filter((version): version is StoredVersion => version !== undefined);
  }

  private diffMessage(
    run: RunView,
    previous: StoredVersion,
    current: StoredVersion,
    names: PeopleNames,
  ): SlackMessage {
    return buildDiffMessage({
      runId: run.runId,
      previous,
      current,
      diff: diffPlans(previous.plan, current.plan),
      editorId: current.createdBy,
      config: this.deps.config,
      run,
      names,
      ...this.time(),
    });
  }

  private escalationMessage(
    run: RunView,
    version: StoredVersion,
    step: ChainStep,
    names: PeopleNames,
    cardLink: string | undefined,
  ): SlackMessage {
    const target = escalationTarget(this.deps.config, run.agent, step);
    const cardChannel = this.deps.config.agents[run.agent]?.channel;
    const label: EscalationStepLabel =
      step.kind === 'remind'
        ? { kind: 'reminder' }
        : { kind: 'escalation', level: step.level, repeat: step.repeat };
    return buildEscalationMessage({
      run,
      version,
      step: label,
      notified: target.notified,
      ...(target.group === undefined ? {} : { group: target.group }),
      ...(target.may === undefined ? {} : { may: target.may }),
      ...(cardChannel === undefined ? {} : { cardChannel }),
      ...(cardLink === undefined ? {} : { cardLink }),
      config: this.deps.config,
      names,
      ...this.time(),
    });
  }

  private time(): { now: number; tz?: string } {
    return { now: this.deps.clock(), ...(this.deps.tz === undefined ? {} : { tz: this.deps.tz }) };
  }
}
