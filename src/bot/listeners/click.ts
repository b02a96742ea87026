/**
 * The middleware every button and select in Countersign's messages and modals goes through, composed
 * in front of each listener the way bolt-js composes its own: `ackClick` reads who clicked where and
 * answers Slack once the click's commit is done (the listener calls `click.acknowledge()` right after
 * it) — so a process that dies before the commit leaves the click unanswered, and Slack tells the
 * person it failed, instead of a click acknowledged and lost; a commit that takes longer than
 * `ACK_WITHIN_MS` (Slack allows 3 s) is acknowledged then and finishes after. `reportFailures` turns an unexpected failure into a log
 * line and a private note (never a stack trace in Slack), `resolveTarget` reads the run and version a
 * button points at or says privately that it cannot tell.
 */
import type { AllMiddlewareArgs, Middleware, SlackActionMiddlewareArgs } from '@slack/bolt';
import { type ButtonValue, buildNotice, parseButtonValue } from '../../../views/index.ts';
import { CountersignError } from '../../pipeline/index.ts';
import { type BlockAction, blockActionSchema, buttonSchema, channelOf } from '../payloads.ts';
import type { Audience } from '../presenter.ts';
import type { ListenerDeps } from './deps.ts';

/** One click, as the listeners read it. */
export interface Click {
  readonly body: BlockAction;
  /** The element used, as Bolt passes it (a button's value or a select's option). */
  readonly action: unknown;
  readonly userId: string;
  /** Where to answer privately (the channel of the message clicked); none for a modal. */
  readonly channel?: string;
  readonly audience: Audience;
  /** Answers Slack's request (once; later calls do nothing): call it right after the click's commit. */
  acknowledge(): Promise<void>;
}

/** What the middleware leaves in Bolt's context for the listener after it. */
export interface ClickContext {
  [key: string]: unknown;
  click?: Click;
  target?: ButtonValue;
}

export type ClickMiddleware = Middleware<SlackActionMiddlewareArgs, ClickContext>;
type ClickArgs = SlackActionMiddlewareArgs & AllMiddlewareArgs<ClickContext>;

/** Slack shows the person an error when a click is not answered within 3 s: answer by then, whatever happens. */
export const ACK_WITHIN_MS = 2_000;

/** Reads the click and answers Slack after the listener's commit (or after `ACK_WITHIN_MS`, or when it ends). */
export const ackClick: ClickMiddleware = async (args) => {
  let acked: Promise<void> | undefined;
  const acknowledge = () => {
    acked ??= args.ack();
    return acked;
  };
  const deadline = setTimeout(() => void acknowledge().catch(() => {}), ACK_WITHIN_MS);
  try {
    const body = blockActionSchema.parse(args.body);
    const channel = channelOf(body);
    args.context.click = {
      body,
      action: args.action,
      userId: body.user.id,
      ...(channel === undefined ? {} : { channel }),
      audience: { userId: body.user.id, ...(channel === undefined ? {} : { channel }) },
      acknowledge,
    };
    await args.next();
  } finally {
    clearTimeout(deadline);
    await acknowledge();
  }
};

/** Failures below are logged and the clicker is told privately that the click was not finished. */
export function reportFailures(deps: ListenerDeps, name: string): ClickMiddleware {
  return async (args) => {
    const click = clickOf(args);
    try {
      await args.next();
    } catch (error) {
      const runId = args.context.target?.runId;
      const fields = { user: click.userId, ...(runId === undefined ? {} : { runId }) };
      deps.onError(error, `${name} by ${click.userId}`, fields);
      if (click.channel === undefined) return;
      await deps.gateway
        .whisper(click.channel, click.userId, {
          text: 'Countersign could not finish handling that click. Check the card before trying again.',
          blocks: [],
        })
        .catch((whisperError: unknown) =>
          deps.onError(whisperError, 'telling the user about an error', fields),
        );
    }
  };
}

/** The run and version (and step) a button points at; an unreadable value is answered privately. */
export function resolveTarget(deps: ListenerDeps): ClickMiddleware {
  return async (args) => {
    const click = clickOf(args);
    const parsed = parseButtonValue(buttonSchema.parse(click.action).value);
    if (!parsed.ok) {
      if (click.channel !== undefined) {
        const notice = buildNotice({ kind: 'not_found', runId: '' }, { now: deps.clock() });
        await deps.gateway.whisper(click.channel, click.userId, notice);
      }
      return;
    }
    args.context.target = parsed.value;
    deps.logger?.debug(
      { user: click.userId, runId: parsed.value.runId, version: parsed.value.version },
      'a click on a run',
    );
    await args.next();
  };
}

/** The click `ackClick` read (a missing one is a wiring bug). */
export function clickOf(args: Pick<ClickArgs, 'context'>): Click {
  const { click } = args.context;
  if (click === undefined)
    throw new CountersignError('internal_invariant', 'listener registered without ackClick in front of it');
  return click;
}

/** The target `resolveTarget` read (a missing one is a wiring bug). */
export function targetOf(args: Pick<ClickArgs, 'context'>): ButtonValue {
  const { target } = args.context;
  if (target === undefined)
    throw new CountersignError(
      'internal_invariant',
      'listener registered without resolveTarget in front of it',
    );
  return target;
}
