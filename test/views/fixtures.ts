import { z } from 'zod';
import config from '../../examples/freight/countersign.config.ts';
import { addedRefundStep, freightPlan } from '../../examples/freight/plans.ts';
import { projectRun } from '../../src/approvals/run-view.ts';
import type { ApprovalRecord, RunStatus, RunView, StoredVersion } from '../../src/approvals/types.ts';
import { type CountersignConfig, defineConfig } from '../../src/config/index.ts';
import {
  choice,
  defineTool,
  diffPlans,
  type EditContext,
  isoDate,
  longText,
  money,
  type PlanDiff,
  type Provenance,
  text,
  type ValidatedPlan,
  type ValidatedStep,
} from '../../src/pipeline/index.ts';
import { validateNow } from '../support/validate-now.ts';

/** 1 April 2026, 10:00 UTC. */
export const NOW = Date.parse('2026-04-01T10:00:00Z');
export const freightConfig: CountersignConfig = config;

/** Validates a plan envelope with the real pipeline; throws (a test bug) when it is invalid. */
export function validPlan(
  raw: unknown,
  options: { config?: CountersignConfig; edit?: EditContext; maxSteps?: number } = {},
): ValidatedPlan {
  const pipeline = (options.config ?? freightConfig).pipeline;
  const result = validateNow(raw, {
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

/** A run view over `current`, projected by the real read model (awaiting, standing, escalation rights). */
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
  const escalatedTo = options.escalatedTo ?? [];
  return projectRun(options.config ?? freightConfig, current.plan.runId, {
    current,
    approvals: options.approvals ?? [],
    fields: {
      agent: current.plan.agent,
      status: options.status ?? 'pending',
      version: current.version,
      createdAt: NOW,
      expiresAt: Date.parse(current.plan.expiresAt),
      ...(options.decidedBy === undefined ? {} : { decidedBy: options.decidedBy }),
      ...(options.decidedAt === undefined ? {} : { decidedAt: options.decidedAt }),
      ...(options.reason === undefined ? {} : { reason: options.reason }),
      escalationLevel: options.escalationLevel ?? (escalatedTo.length > 0 ? 1 : 0),
      escalatedTo,
      ...(escalatedTo.length === 0
        ? {}
        : {
            escalatedLevels: Object.fromEntries(
              escalatedTo.map((user) => [user, [options.escalationLevel ?? 1]]),
            ),
          }),
      journalSeq: 0,
      journalHead: '',
      planDigest: current.plan.digest,
      submissionDigest: '',
    },
  });
}

/** An approval of `step` by `userId` at version `version`. */
export function approval(step: ValidatedStep, userId: string, version = 1): ApprovalRecord {
  return { stepId: step.id, stepDigest: step.digest, userId, version, at: NOW + 5 * 60_000 };
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
  const added = new Set(diff.changes.flatMap((change) => (change.kind === 'added' ? [change.stepId] : [])));
  const touched = new Set(diff.touchedStepIds);
  const current: StoredVersion = {
    version: 2,
    plan,
    provenance: Object.fromEntries(
      plan.steps.map((step) => [
        step.id,
        touched.has(step.id)
          ? ({
              by: 'user',
              userId: editorId,
              version: 2,
              change: added.has(step.id) ? 'added' : 'changed',
            } as Provenance)
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

/** A tool with one argument of every kind the edit modal knows (docs/architecture.md §9), nested and optional ones. */
export const updateOrder = defineTool({
  name: 'update_order',
  title: 'Update order',
  effect: 'write',
  args: z.strictObject({
    order_id: text({ label: 'Order' }),
    note: longText({ label: 'Note' }).optional(),
    quantity: z.int().min(1),
    price: money({ currency: 'EUR', label: 'Unit price' }),
    fee: money({ currency: 'JPY' }).optional(),
    speed: choice(['standard', 'express'], { label: 'Shipping speed' }),
    ship_on: isoDate({ label: 'Ship on' }),
    deliver_by: z.iso.datetime().optional(),
    gift: z.boolean(),
    insured: z.boolean().optional(),
    contact: z.email(),
    tracking_url: z.url().nullable(),
    address: z.strictObject({ city: text({ label: 'City' }), postcode: text().optional() }),
    tags: z.array(z.string()).optional(),
    reference: z.union([z.string(), z.int()]).optional(),
  }),
});

/** No policy rule covers it, so every step calling it is blocked. */
export const wireFunds = defineTool({
  name: 'wire_funds',
  title: 'Wire funds',
  effect: 'irreversible',
  args: z.strictObject({ amount: money({ label: 'Amount', max: 1_000_000 }), iban: text({ label: 'IBAN' }) }),
});

export const shopConfig: CountersignConfig = defineConfig({
  tools: [updateOrder, wireFunds],
  agents: {
    shop: { tools: ['update_order', 'wire_funds'], channel: 'C0SHOP', secret: 'shop-secret-0123456789' },
  },
  groups: { ops: ['U0OP1', 'U0OP2'], leads: ['U0LEAD1'] },
  policy: [{ name: 'orders', tool: 'update_order', route: 'review', approvers: 'ops' }],
  authoring: { ops: ['update_order'], leads: '*' },
});

/** Arguments for `update_order` using every field. */
export const orderArgs = {
  order_id: 'ord_1001',
  note: 'Leave at the back door.\nRing twice.',
  quantity: 3,
  price: 1999,
  fee: 500,
  speed: 'express',
  ship_on: '2026-04-02',
  deliver_by: '2026-04-03T16:30:00Z',
  gift: true,
  contact: 'ops@example.com',
  tracking_url: null,
  address: { city: 'Oslo', postcode: '0150' },
  tags: ['fragile', 'heavy'],
  reference: 42,
};

/** A shop run at version 1 with the given steps. */
export function shopRun(
  steps: readonly { id: string; tool: string; args: Record<string, unknown> }[],
  runId = 'run-shop-1',
) {
  const plan = validPlan(
    { runId, agent: 'shop', expiresAt: new Date(NOW + 3_600_000).toISOString(), steps },
    { config: shopConfig, maxSteps: 500 },
  );
  return runView(agentVersion(plan), { config: shopConfig });
}

/**
 * `view.state.values` as Slack sends it for a modal nobody touched: every input holds its initial value
 * (shapes from slack-protocol/state_values.json). `overrides` replace whole element states by block id.
 */
export function untouchedState(
  view: { readonly blocks: readonly unknown[] },
  overrides: Record<string, Record<string, unknown>> = {},
): Record<string, Record<string, unknown>> {
  const values: Record<string, Record<string, unknown>> = {};
  for (const block of view.blocks as Record<string, unknown>[]) {
    if (block.type !== 'input' || typeof block.block_id !== 'string') continue;
    const element = block.element as Record<string, unknown>;
    const actionId = element.action_id as string;
    const type = element.type as string;
    const state: Record<string, unknown> = { type };
    switch (type) {
      case 'plain_text_input':
      case 'number_input':
      case 'email_text_input':
      case 'url_text_input':
        state.value = element.initial_value ?? null;
        break;
      case 'datepicker':
        state.selected_date = element.initial_date ?? null;
        break;
      case 'datetimepicker':
        state.selected_date_time = element.initial_date_time ?? null;
        break;
      case 'static_select':
        state.selected_option = element.initial_option ?? null;
        break;
      case 'checkboxes':
      case 'multi_static_select':
        state.selected_options = element.initial_options ?? [];
        break;
      default:
        throw new Error(`untouchedState: no state shape for ${type}`);
    }
    values[block.block_id] = { [actionId]: overrides[block.block_id] ?? state };
  }
  return values;
}
