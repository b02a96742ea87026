/**
 * The escalation chain's vocabulary, and who each step of it notifies. One answer for the timers (who
 * the approvals record as escalated to) and for Slack (whom the messages go to), read from today's
 * config. Pure.
 */
import type { CountersignConfig, EscalationGrant } from '../config/config-types.ts';

/** One step of a version's escalation chain: the reminder, or a level (1-based) and its repeat (0 for the level itself). */
export type ChainStep =
  | { readonly kind: 'remind' }
  | { readonly kind: 'escalate'; readonly level: number; readonly repeat: number };

/** A chain step's short name: `reminder`, `l2`, `l2r1`. */
export function chainStepKey(step: ChainStep): string {
  if (step.kind === 'remind') return 'reminder';
  return `l${step.level}${step.repeat > 0 ? `r${step.repeat}` : ''}`;
}

/** Reads a chain step's short name back; undefined for anything else. */
export function parseChainStepKey(key: string): ChainStep | undefined {
  if (key === 'reminder') return { kind: 'remind' };
  const match = /^l([1-9]\d{0,3})(?:r([1-9]\d{0,3}))?$/.exec(key);
  if (match === null) return undefined;
  return { kind: 'escalate', level: Number(match[1]), repeat: match[2] === undefined ? 0 : Number(match[2]) };
}

/** Who and where one chain step notifies, and what the people it notifies may do. */
export interface EscalationTarget {
  readonly step: ChainStep;
  /** Slack user ids sent a DM (none for the reminder). */
  readonly notified: readonly string[];
  /** The group the level named them by, for messages. */
  readonly group?: string;
  /** A channel posted to: the level's, or for the reminder the card's. */
  readonly channel?: string;
  /** What the level grants the people it notifies (absent: they are only told). */
  readonly may?: EscalationGrant;
}

/**
 * Who a chain step notifies, from today's config: the level's people and channel, or for the reminder
 * the card's channel. A level since removed from the config notifies nobody.
 * @example escalationTarget(config, 'freight-ops', { kind: 'escalate', level: 1, repeat: 0 }).notified // ['U0LEAD1']
 */
export function escalationTarget(
  config: Pick<CountersignConfig, 'agents' | 'escalation'>,
  agent: string,
  step: ChainStep,
): EscalationTarget {
  if (step.kind === 'remind') {
    const channel = Object.hasOwn(config.agents, agent) ? config.agents[agent]?.channel : undefined;
    return { step, notified: [], ...(channel === undefined ? {} : { channel }) };
  }
  const level = config.escalation[agent]?.levels[step.level - 1];
  return {
    step,
    notified: level?.notify ?? [],
    ...(level?.group === undefined ? {} : { group: level.group }),
    ...(level?.channel === undefined ? {} : { channel: level.channel }),
    ...(level?.may === undefined ? {} : { may: level.may }),
  };
}
