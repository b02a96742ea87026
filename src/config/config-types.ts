/** What `defineConfig` takes (`ConfigInput` and its parts) and what it resolves them to (`CountersignConfig`). */
import type { PipelineConfig, PlanLimits } from '../pipeline/context.ts';
import type { PolicyRule } from '../pipeline/policy.ts';
import type { ToolDefinition } from '../pipeline/tool.ts';
import type { SecretSource } from './secret-source.ts';

export interface AgentInput {
  /** Tools this agent may plan to call. */
  readonly tools: readonly string[];
  /** Slack channel id its cards are posted to. */
  readonly channel: string;
  /**
   * Shared secret: the agent signs its requests to the gateway with it (HMAC), and Countersign signs
   * this agent's webhooks with it. It cannot sign a decision: receipts are Countersign's own key.
   */
  readonly secret: SecretSource;
  /** How long this agent's plans stay open when a submission does not say (default `defaults.expiresIn`). */
  readonly expiresIn?: string;
  /** Where each of this agent's decisions is POSTed (signed, retried for hours); optional. */
  readonly webhook?: { readonly url: string };
  /** This agent's request rate at the gateway, per process (default `defaults.rateLimit`). */
  readonly rateLimit?: RateLimitInput;
  /**
   * The drift alarm: posted once when, over the sliding `window` (default `'24h'`), at least `minPlans`
   * plans (default 20) were submitted and the share of them with more than half of their steps added,
   * changed or removed by people reaches `above` (0–1, e.g. `0.3`); posted again only after the share
   * has fallen below it and crossed it again. To `notify` (a group name or Slack ids), by default the
   * agent's first escalation level (its channel, else its people), else the agent's channel.
   */
  readonly drift?: DriftInput;
}

export interface DriftInput {
  readonly above: number;
  readonly minPlans?: number;
  readonly window?: string;
  readonly notify?: string | readonly string[];
}

/** An agent's drift alarm, resolved. `notify` is read when the alarm is posted (groups may be Slack user groups). */
export interface DriftPolicy {
  readonly above: number;
  readonly minPlans: number;
  readonly windowMs: number;
  /** A group name, or Slack ids; absent: the agent's first escalation level, else its channel. */
  readonly notify?: string | readonly string[];
}

/** A request rate: `requests` per `per` (a duration such as `'1m'`). */
export interface RateLimitInput {
  readonly requests: number;
  readonly per: string;
}

/** A request rate, resolved. */
export interface RateLimit {
  readonly requests: number;
  readonly perMs: number;
}

/**
 * What the people an escalation level notifies may do on the run, beyond their own groups' rights.
 * Without `may`, a level only notifies: being escalated to grants nothing.
 */
export interface EscalationGrantInput {
  /** They may approve steps whose approver group is one of these (`'*'`: any group). */
  readonly approve: '*' | readonly string[];
  /**
   * How one of their approvals counts: `'member'` (default) as one of the N approvals the step's
   * group must give; `'alone'` as enough for the step by itself.
   */
  readonly counts?: 'member' | 'alone';
  /** Whether that includes steps of irreversible tools (default false: never unless granted). */
  readonly irreversible?: boolean;
}

export interface EscalationLevelInput {
  /** Time since the card was posted (or the version created) before this level fires: `'15m'`. */
  readonly after: string;
  /** A group name, or Slack user ids. */
  readonly notify: string | readonly string[];
  /** Also post in this channel. */
  readonly channel?: string;
  /** What the notified people may do on the run (default: nothing, they are only told). */
  readonly may?: EscalationGrantInput;
}

export interface EscalationInput {
  readonly levels: readonly EscalationLevelInput[];
  /** Re-notify the last level `times` more times, `every` apart. */
  readonly repeat?: { readonly times: number; readonly every: string };
  /** Remind the original channel this long after posting, before the first escalation. */
  readonly reminder?: { readonly after: string };
}

export interface DefaultsInput {
  /** How long a plan stays open when the agent does not say (default `'24h'`). */
  readonly expiresIn?: string;
  /** The longest an agent may ask for (default `'7d'`). */
  readonly maxExpiresIn?: string;
  /** A step reported `applying` this long without a result becomes `uncertain` (default `'15m'`). */
  readonly uncertainAfter?: string;
  readonly limits?: Partial<PlanLimits>;
  /** Each agent's request rate at the gateway, per process (default 600 per minute). */
  readonly rateLimit?: RateLimitInput;
  /** Time budget of each `checks`, `annotate` and `preview` call (default `'2s'`, at most `'1m'`). */
  readonly hookTimeout?: string;
  /**
   * Group that reviews a step an `auto` rule would let through when one of its hooks failed or timed
   * out (one approval). Default: the first group in `authoring` that may write the step's tool; required
   * when an `auto` rule covers a tool with `checks`, `annotate` or `preview` that no group may write.
   */
  readonly unverifiedApprovers?: string;
}

/** A group as configured: Slack user ids, or a Slack user group (S…) resolved at start. */
export type GroupInput = readonly string[] | { readonly usergroup: string };

export interface ConfigInput {
  readonly tools: readonly ToolDefinition[];
  readonly agents: Readonly<Record<string, AgentInput>>;
  /**
   * Group name → Slack user ids, or a Slack user group (`{ usergroup: 'S0FIN' }`) whose members are read
   * with `usergroups.users.list` at start and refreshed while Countersign runs.
   */
  readonly groups: Readonly<Record<string, GroupInput>>;
  readonly policy: readonly PolicyRule[];
  /**
   * `write` tools whose effect stays inside your own systems (an internal note, a tag): a policy rule
   * may mark their steps `continue`, to run before the whole plan is decided. Listing a tool here
   * changes nothing else; `read` tools may continue without it, `irreversible` tools never.
   */
  readonly internalTools?: readonly string[];
  /** Group name → tools its members may add or change in an edit (`'*'` for all). */
  readonly authoring: Readonly<Record<string, readonly string[] | '*'>>;
  /** Per agent. */
  readonly escalation?: Readonly<Record<string, EscalationInput>>;
  readonly defaults?: DefaultsInput;
}

/** An escalation level's grant, resolved (see `EscalationGrantInput`). */
export interface EscalationGrant {
  readonly approve: '*' | readonly string[];
  readonly counts: 'member' | 'alone';
  readonly irreversible: boolean;
}

export interface EscalationLevel {
  readonly afterMs: number;
  /** Resolved Slack user ids. */
  readonly notify: readonly string[];
  /** The group name when `notify` named one, for messages. */
  readonly group?: string;
  readonly channel?: string;
  /** What the notified people may do; absent: nothing beyond their own groups' rights. */
  readonly may?: EscalationGrant;
}

export interface EscalationPolicy {
  readonly levels: readonly EscalationLevel[];
  readonly repeat?: { readonly times: number; readonly everyMs: number };
  readonly reminderAfterMs?: number;
}

/** The validated configuration every module reads. */
export interface CountersignConfig {
  readonly pipeline: PipelineConfig;
  readonly agents: Readonly<Record<string, AgentInput>>;
  /**
   * Group name → members. A group configured as a Slack user group starts empty (nobody counts as a
   * member) and is filled in place by the user-group directory (src/bot/user-groups.ts), so every reader
   * — approvals, the pipeline, escalation levels naming it — sees the same membership.
   */
  readonly groups: Readonly<Record<string, readonly string[]>>;
  /** Group name → the Slack user group (S…) it is read from, for groups configured that way. */
  readonly usergroups: Readonly<Record<string, string>>;
  readonly escalation: Readonly<Record<string, EscalationPolicy>>;
  readonly defaults: {
    readonly expiresInMs: number;
    /** Per agent, where the agent sets its own default (`agents.<name>.expiresIn`). */
    readonly agentExpiresInMs: Readonly<Record<string, number>>;
    readonly maxExpiresInMs: number;
    readonly uncertainAfterMs: number;
    /** The gateway's request rate for an agent without its own. */
    readonly rateLimit: RateLimit;
    /** Per agent, where the agent sets its own (`agents.<name>.rateLimit`). */
    readonly agentRateLimits: Readonly<Record<string, RateLimit>>;
  };
  /** SHA-256 of the policy-relevant config (rules, tools and their hook sources): decisions record it. */
  readonly digest: string;
  /** Per agent with a drift alarm (`agents.<name>.drift`). */
  readonly drift: Readonly<Record<string, DriftPolicy>>;
  /** Each agent's sliding edit window (ms) for `/metrics` and the drift alarm: its drift window, else 24 h. */
  readonly editWindowMs: Readonly<Record<string, number>>;
}

/** The gateway's request rate for `agent`: its own, else the default. */
export function rateLimitOf(config: Pick<CountersignConfig, 'defaults'>, agent: string): RateLimit {
  return Object.hasOwn(config.defaults.agentRateLimits, agent)
    ? (config.defaults.agentRateLimits[agent] ?? config.defaults.rateLimit)
    : config.defaults.rateLimit;
}
