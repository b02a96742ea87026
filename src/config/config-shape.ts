/** The structure a config must have, checked by zod, and its problems worded for the person fixing it. */
import { z } from 'zod';
import { ID_PATTERN } from '../pipeline/phases/parse.ts';
import type { ToolDefinition } from '../pipeline/tool.ts';
import type { ConfigInput } from './config-types.ts';

const slackId = z
  .string()
  .regex(/^[A-Z0-9][A-Z0-9_]{1,31}$/, 'must be a Slack id such as U024BE7LH or C0OPS');
const durationText = z.string();
const rateLimitShape = z.strictObject({ requests: z.int().min(1), per: durationText });
const shape = z.strictObject({
  tools: z.array(z.custom<ToolDefinition>((t) => typeof t === 'object' && t !== null && 'name' in t)).min(1),
  agents: z.record(
    z.string().regex(ID_PATTERN, 'agent names are letters, digits, - and _'),
    z.strictObject({
      tools: z.array(z.string()).min(1),
      channel: slackId,
      secret: z.union([
        z.string().min(16, 'must be at least 16 characters'),
        z.strictObject({ env: z.string().min(1) }),
      ]),
      expiresIn: durationText.optional(),
      webhook: z
        .strictObject({ url: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }) })
        .optional(),
      rateLimit: rateLimitShape.optional(),
      drift: z
        .strictObject({
          above: z
            .number()
            .gt(0, 'must be a share above 0, such as 0.3 for 30%')
            .max(1, 'must be a share of at most 1, such as 0.3 for 30%'),
          minPlans: z.int().min(1, 'must be at least 1').optional(),
          window: durationText.optional(),
          notify: z.union([z.string(), z.array(slackId).min(1)]).optional(),
        })
        .optional(),
    }),
  ),
  groups: z.record(
    z.string().regex(ID_PATTERN, 'group names are letters, digits, - and _'),
    z.union([
      z.array(slackId),
      z.strictObject({
        usergroup: z.string().regex(/^S[A-Z0-9]{2,31}$/, 'must be a Slack user group id such as S0FIN'),
      }),
    ]),
  ),
  policy: z.array(
    z.strictObject({
      name: z.string().optional(),
      tool: z.union([z.string(), z.array(z.string()).min(1)]),
      when: z.function().optional(),
      route: z.enum(['auto', 'review', 'block']),
      approvers: z.string().optional(),
      approvals: z.int().min(1).optional(),
      distinctFromAuthor: z.boolean().optional(),
      escalatedMayApprove: z.boolean().optional(),
      reason: z.string().optional(),
      continue: z.boolean().optional(),
      changes: z
        .strictObject({
          paths: z.array(z.string().min(1)).min(1).optional(),
          entityTypes: z.array(z.string().min(1)).min(1).optional(),
          violated: z.union([z.literal(true), z.array(z.string().min(1)).min(1)]).optional(),
          unknownImpact: z.literal(true).optional(),
        })
        .optional(),
    }),
  ),
  internalTools: z.array(z.string()).optional(),
  authoring: z.record(z.string(), z.union([z.literal('*'), z.array(z.string())])),
  escalation: z
    .record(
      z.string(),
      z.strictObject({
        levels: z
          .array(
            z.strictObject({
              after: durationText,
              notify: z.union([z.string(), z.array(slackId).min(1)]),
              channel: slackId.optional(),
              may: z
                .strictObject({
                  approve: z.union([z.literal('*'), z.array(z.string()).min(1)]),
                  counts: z.enum(['member', 'alone']).optional(),
                  irreversible: z.boolean().optional(),
                })
                .optional(),
            }),
          )
          .min(1),
        repeat: z.strictObject({ times: z.int().min(1).max(100), every: durationText }).optional(),
        reminder: z.strictObject({ after: durationText }).optional(),
      }),
    )
    .optional(),
  defaults: z
    .strictObject({
      expiresIn: durationText.optional(),
      maxExpiresIn: durationText.optional(),
      uncertainAfter: durationText.optional(),
      limits: z
        .strictObject({
          maxPlanBytes: z.int().min(1024).optional(),
          maxSteps: z.int().min(1).max(500).optional(),
          maxStringLength: z.int().min(16).optional(),
          maxDepth: z.int().min(2).max(64).optional(),
        })
        .optional(),
      rateLimit: rateLimitShape.optional(),
      hookTimeout: durationText.optional(),
      unverifiedApprovers: z.string().optional(),
    })
    .optional(),
});

/** Issue codes about a value, not the structure: checking can go on past them. */
const VALUE_ISSUES: ReadonlySet<string> = new Set(['invalid_format', 'too_small', 'too_big', 'invalid_key']);

/** `agents.ops.channel: must be a Slack id …`, with array indexes written `policy[0]`. */
function describeIssue(issue: z.core.$ZodIssue): string {
  const where =
    issue.path.reduce<string>(
      (text, key) =>
        typeof key === 'number' ? `${text}[${key}]` : text === '' ? String(key) : `${text}.${String(key)}`,
      '',
    ) || 'config';
  if (issue.code === 'invalid_key') {
    const reason = issue.issues[0]?.message ?? issue.message;
    return `${where}: ${reason}`;
  }
  return `${where}: ${issue.message}`;
}

/** What the schema found: its problems, and whether they leave the structure intact. */
export interface ShapeCheck {
  readonly problems: readonly string[];
  /** True when every problem is about a value, so the cross-checks can still read the config. */
  readonly structureIntact: boolean;
}

/** Checks `input` against the config's schema; a problem per issue, in zod's order. */
export function checkShape(input: ConfigInput): ShapeCheck {
  const parsed = shape.safeParse(input);
  if (parsed.success) return { problems: [], structureIntact: true };
  return {
    problems: parsed.error.issues.map(describeIssue),
    structureIntact: parsed.error.issues.every((issue) => VALUE_ISSUES.has(issue.code)),
  };
}
