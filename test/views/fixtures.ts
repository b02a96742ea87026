import config from '../../examples/freight/countersign.config.ts';
import { addedRefundStep, freightPlan } from '../../examples/freight/plans.ts';
import { type Authority, awaitedSteps, blockedSteps } from '../../src/approvals/rules.ts';
import type { ApprovalRecord, RunStatus, RunView, StoredVersion } from '../../src/approvals/types.ts';
import type { CountersignConfig } from '../../src/config/define-config.ts';
import {
  diffPlans,
  type EditContext,
  type PlanDiff,
  type Provenance,
  type ValidatedPlan,
  type ValidatedStep,
  validate,
} from '../../src/pipeline/index.ts';

/** 1 April 2026, 10:00 UTC. */
export const NOW = Date.parse('2026-04-01T10:00:00Z');
export const freightConfig: CountersignConfig = config;

/** Validates a plan envelope with the real pipeline; throws (a test bug) when it is invalid. */
export function validPlan(
  raw: unknown,
  options: { config?: CountersignConfig; edit?: EditContext; maxSteps?: number } = {},
): ValidatedPlan {
  const pipeline = (options.config ?? freightConfig).pipeline;
  const result = validate(raw, {
    config:
      options.maxSteps === undefined
        ? pipeline
        : { ...pipeline, limits: { ...pipeline.limits, maxSteps: options.maxSteps } },
    now: NOW,
    ...(options.edit === undefined ? {} : { edit: options.edit }),
  });
  if (!result.ok) throw new Error(`fixture plan is invalid: ${JSON.stringify(result.diagnostics)}`);
  return result.plan;
}

/** Version 1 as intake stores it: every step by the agent. */
export function agentVersion(plan: ValidatedPlan): StoredVersion {
  return {
    version: 1,
    plan,
    provenance: Object.fromEntries(
      plan.steps.map((step) => [step.id, { by: 'agent', version: 1 } as Provenance]),
    ),
    createdBy: 'agent',
    createdAt: NOW,
  };
}

/** A run view over `current`, with awaiting and blocked steps computed by the real rules. */
export function runView(
  current: StoredVersion,
  options: {
    config?: CountersignConfig;
    approvals?: readonly ApprovalRecord[];
    status?: RunStatus;
    decidedBy?: string;
    decidedAt?: number;
    reason?: string;
    escalatedTo?: readonly string[];
    escalationLevel?: number;
  } = {},
): RunView {
  const authority: Authority = {
    groups: (options.config ?? freightConfig).groups,
    escalatedTo: options.escalatedTo ?? [],
  };
  const approvals = options.approvals ?? [];
  const status = options.status ?? 'pending';
  return {
    runId: current.plan.runId,
    agent: current.plan.agent,
    status,
    version: current.version,
    current,
    approvals,
    awaiting: status === 'pending' ? awaitedSteps(current, approvals, authority) : [],
    blocked: blockedSteps(current),
    ...(options.decidedBy === undefined ? {} : { decidedBy: options.decidedBy }),
    ...(options.decidedAt === undefined ? {} : { decidedAt: options.decidedAt }),
    ...(options.reason === undefined ? {} : { reason: options.reason }),
    escalationLevel: options.escalationLevel ?? 0,
    createdAt: NOW,
  };
}

/** An approval of `step` by `userId` at version `version`. */
export function approval(step: ValidatedStep, userId: string, version = 1): ApprovalRecord {
  return { stepDigest: step.digest, userId, version, at: NOW + 5 * 60_000 };
}

/** The freight plan from the product brief, version 1, pending. */
export function freightV1(): StoredVersion {
  return agentVersion(validPlan(freightPlan({ now: NOW })));
}

/**
 * The brief's edit by a finance user: the delivery window moves to 4 April and a refund on an invoice
 * of another account is added. Returns both versions and the diff.
 */
export function freightEdit(editorId = 'U0FIN1'): {
  previous: StoredVersion;
  current: StoredVersion;
  diff: PlanDiff<ValidatedStep>;
} {
  const previous = freightV1();
  const base = previous.plan;
  const candidate = {
    runId: base.runId,
    agent: base.agent,
    ...(base.summary === undefined ? {} : { summary: base.summary }),
    ...(base.context === undefined ? {} : { context: base.context }),
    expiresAt: base.expiresAt,
    steps: [
      ...base.steps.map((step) =>
        step.id === 's2'
          ? { id: step.id, tool: step.tool, args: { ...step.args, window: '2026-04-04' } }
          : { id: step.id, tool: step.tool, args: step.args },
      ),
      { ...addedRefundStep, args: { ...addedRefundStep.args } },
    ],
  };
  const plan = validPlan(candidate, { edit: { editorId, base } });
  const diff = diffPlans(base, plan);
  const touched = new Set(diff.touchedStepIds);
  const current: StoredVersion = {
    version: 2,
    plan,
    provenance: Object.fromEntries(
      plan.steps.map((step) => [
        step.id,
        touched.has(step.id)
          ? ({ by: 'user', userId: editorId, version: 2 } as Provenance)
          : (previous.provenance[step.id] as Provenance),
      ]),
    ),
    createdBy: editorId,
    createdAt: NOW + 10 * 60_000,
    baseVersion: 1,
  };
  return { previous, current, diff };
}

/** Every mrkdwn text in a message or view, with where it is, plus the message's fallback `text`. */
export function mrkdwnTexts(value: unknown, at = ''): { at: string; text: string }[] {
  if (Array.isArray(value)) return value.flatMap((item, index) => mrkdwnTexts(item, `${at}/${index}`));
  if (typeof value !== 'object' || value === null) return [];
  const record = value as Record<string, unknown>;
  const own = record.type === 'mrkdwn' && typeof record.text === 'string' ? [{ at, text: record.text }] : [];
  return [
    ...own,
    ...Object.entries(record).flatMap(([key, child]) =>
      key === 'text' && typeof child === 'string' && at === ''
        ? [{ at: '/text', text: child }]
        : mrkdwnTexts(child, `${at}/${key}`),
    ),
  ];
}

/**
 * What Slack would parse as a command or entity in mrkdwn, other than mentions of `allowedUsers`
 * (ids this app put there on purpose): any `<…>` that is not `<@ALLOWED>`, and any `&` that does not
 * start `&amp;`, `&lt;` or `&gt;`.
 */
export function unescapedMarkup(text: string, allowedUsers: readonly string[]): string[] {
  const problems: string[] = [];
  for (const match of text.matchAll(/<[^>]*>?/g)) {
    const inner = /^<@([A-Z0-9]+)>$/.exec(match[0]);
    if (!inner || !allowedUsers.includes(inner[1]!)) problems.push(match[0]);
  }
  for (const match of text.matchAll(/&(?!amp;|lt;|gt;)/g)) problems.push(`& at ${match.index}`);
  return problems;
}

/** Slack user ids in the freight config: the only mentions a freight message may carry. */
export const FREIGHT_USERS = Object.values(freightConfig.groups).flat();
