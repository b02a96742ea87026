import type { PlanEnvelope } from './plan.ts';
import type { PolicyRule } from './policy.ts';
import type { ToolDefinition } from './tool.ts';

/** Size limits on a plan; each one breached is a named parse diagnostic, never a crash. */
export interface PlanLimits {
  /** UTF-8 bytes of the submission. */
  readonly maxPlanBytes: number;
  readonly maxSteps: number;
  /** UTF-16 code units of any string (keys included). */
  readonly maxStringLength: number;
  /** Nesting of arrays and objects anywhere in the plan. */
  readonly maxDepth: number;
}

export const DEFAULT_LIMITS: PlanLimits = Object.freeze({
  maxPlanBytes: 256 * 1024,
  maxSteps: 50,
  maxStringLength: 10_000,
  maxDepth: 12,
});

/** The part of the configuration the pipeline reads. Built by `defineConfig` (src/config). */
export interface PipelineConfig {
  readonly tools: ReadonlyMap<string, ToolDefinition>;
  /** Per agent, the tools it may plan to call. */
  readonly agents: Readonly<Record<string, { readonly tools: readonly string[] }>>;
  /** Group name → Slack user ids. */
  readonly groups: Readonly<Record<string, readonly string[]>>;
  readonly policy: readonly PolicyRule[];
  /** Group name → tools its members may write in an edit (`'*'` for all). */
  readonly authoring: Readonly<Record<string, readonly string[]>>;
  readonly limits: PlanLimits;
  /** The latest `expiresAt` an agent may ask for, relative to submission. */
  readonly maxExpiresInMs: number;
  /** How long a plan stays open when it does not say (`defaults.expiresIn`). */
  readonly defaultExpiresInMs: number;
  /** Per agent, where the agent's config sets its own default (`agents.<name>.expiresIn`). */
  readonly agentExpiresInMs: Readonly<Record<string, number>>;
  /** Time budget of each `checks`, `annotate` and `preview` call (`defaults.hookTimeout`; 2 s when absent). */
  readonly hookTimeoutMs?: number;
  /**
   * Group that reviews a step a rule would let through (`auto`) when one of its hooks failed or ran out
   * of time (`defaults.unverifiedApprovers`). Without it: the first group in `authoring` that may write
   * the step's tool (`unverifiedReviewers`); with neither, the step is blocked, saying why — and
   * `defineConfig` refuses a config where that could happen.
   */
  readonly unverifiedApprovers?: string;
}

/** An edit: the editor and the version the candidate plan was derived from. */
export interface EditContext {
  readonly editorId: string;
  readonly base: PlanEnvelope;
}

/**
 * Waits `ms` and resolves; when `signal` aborts first, it never resolves (and holds no timer). Hooks'
 * time budgets run on it; tests pass their own, so nothing in them waits on the wall clock.
 */
export type HookTimer = (ms: number, signal: AbortSignal) => Promise<void>;

/** Everything `validate` needs besides the plan; time is passed in, never read. */
export interface ValidationContext {
  readonly config: PipelineConfig;
  /** Milliseconds since the epoch. */
  readonly now: number;
  /** The timer hooks' budgets run on (default: `setTimeout`). */
  readonly timer?: HookTimer;
  /** Present when validating an edited plan: turns on may_author and immutability checks. */
  readonly edit?: EditContext;
}

/** Names of the groups a Slack user belongs to. */
export function groupsOf(config: Pick<PipelineConfig, 'groups'>, userId: string): string[] {
  return Object.entries(config.groups)
    .filter(([, members]) => members.includes(userId))
    .map(([group]) => group);
}

/** Whether `userId` may write (add or change) a step calling `tool` in an edit. */
export function mayAuthor(
  config: Pick<PipelineConfig, 'groups' | 'authoring'>,
  userId: string,
  tool: string,
): boolean {
  return groupsOf(config, userId).some((group) => {
    const tools = config.authoring[group];
    return tools !== undefined && (tools.includes('*') || tools.includes(tool));
  });
}

/** Tools `userId` may author, in registry order: what the edit modal's add_step select offers. */
export function authorableTools(
  config: Pick<PipelineConfig, 'groups' | 'authoring' | 'tools'>,
  userId: string,
  allowlist: readonly string[],
): ToolDefinition[] {
  return [...config.tools.values()].filter(
    (tool) => allowlist.includes(tool.name) && mayAuthor(config, userId, tool.name),
  );
}

/**
 * Who reviews a step of `tool` that a rule would let through but whose hooks could not verify it:
 * `unverifiedApprovers` when configured, else the first group in `authoring` that may write the tool
 * (people trusted to write such a step vouch for it); undefined when there is neither.
 */
export function unverifiedReviewers(
  config: Pick<PipelineConfig, 'authoring' | 'unverifiedApprovers'>,
  tool: string,
): string | undefined {
  if (config.unverifiedApprovers !== undefined) return config.unverifiedApprovers;
  return Object.entries(config.authoring).find(
    ([, tools]) => tools.includes('*') || tools.includes(tool),
  )?.[0];
}
