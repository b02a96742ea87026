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
}

/** An edit: the editor and the version the candidate plan was derived from. */
export interface EditContext {
  readonly editorId: string;
  readonly base: PlanEnvelope;
}

/** Everything `validate` needs besides the plan; time is passed in, never read. */
export interface ValidationContext {
  readonly config: PipelineConfig;
  /** Milliseconds since the epoch. */
  readonly now: number;
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
