/**
 * The small configuration the model-based test runs the real service with, and the same rules written
 * out as plain data for the reference model (test/approvals/model/run-model.ts), which never reads the
 * real config's policy functions.
 *
 * Three tools: `ship` (write, reviewed by ops), `pay` (irreversible, reviewed by two fin people other
 * than its author; three from $100 — escalation may not help there —, blocked from $1,000) and `note`
 * (write, automatic unless urgent, then one fin approval). ops may write ship and note steps, fin and
 * lead anything. Quiet notes and shipping are `continue` (both declared internal): released before
 * the plan is decided once approved and their dependencies applied; payments never. Escalation level 1 tells the leads, who may then count as one member of ops or fin
 * for reversible steps; level 2 tells U0LEAD1 and the outsider, whose approval alone settles a fin step,
 * irreversible ones included.
 *
 * The tools' async hooks (issue 19) read a small outside world, one per run (`openWorld`): `ship`'s
 * `checks` refuse order B while its warehouse is closed, and `pay`'s `preview` names the supplier at
 * the version its record has now. The world is keyed by run id because the test's lanes run at once in
 * this module; the commands move it, and the reference model keeps its own copy.
 */
import { z } from 'zod';
import { defineConfig } from '../../../src/config/index.ts';
import { choice, defineTool, money, rule, type ToolHookContext } from '../../../src/pipeline/index.ts';

export const AGENT = 'model-agent';
export const SECRET = 'model-test-secret-0123456789';

export const GROUPS = {
  ops: ['U0OPS1', 'U0OPS2', 'U0OPS3'],
  fin: ['U0FIN1', 'U0FIN2', 'U0FIN3'],
  // U0OPS3 is an operator and a lead: a member's rights and an escalation's on one person.
  lead: ['U0LEAD1', 'U0OPS3'],
} as const satisfies Record<string, readonly string[]>;
export type GroupName = keyof typeof GROUPS;

/** In no group: may act only once escalation level 2 names them. */
export const OUTSIDER = 'U0OUT';

/** Everyone who clicks in the model run. */
export const USERS: readonly string[] = [...new Set([...Object.values(GROUPS).flat(), OUTSIDER])];

/** Group → tools its members may write in an edit. */
export const AUTHORING: Readonly<Record<GroupName, '*' | readonly string[]>> = {
  ops: ['ship', 'note'],
  fin: '*',
  lead: '*',
};

export type Effect = 'write' | 'irreversible';
export const EFFECTS: Readonly<Record<string, Effect>> = {
  ship: 'write',
  pay: 'irreversible',
  note: 'write',
};

export interface Grant {
  readonly approve: '*' | readonly GroupName[];
  readonly counts: 'member' | 'alone';
  readonly irreversible: boolean;
}

/** The escalation levels as resolved: whom each notifies and what it grants them. */
export const LEVELS: readonly { readonly notify: readonly string[]; readonly may: Grant }[] = [
  { notify: GROUPS.lead, may: { approve: ['ops', 'fin'], counts: 'member', irreversible: false } },
  { notify: ['U0LEAD1', OUTSIDER], may: { approve: ['fin'], counts: 'alone', irreversible: true } },
];

/** The amounts (cents) where payments need more approvals, and where they are refused outright. */
export const LARGE_PAYMENT = 10_000;
export const HUGE_PAYMENT = 100_000;

export const SUPPLIERS = ['acme', 'globex'] as const;
export type Supplier = (typeof SUPPLIERS)[number];

/** What the hooks read of the outside world: order B's warehouse, and each supplier record's version. */
export interface World {
  warehouseBClosed: boolean;
  supplierVersions: Record<Supplier, number>;
}

/** What `ship`'s checks answer for order B while its warehouse is closed. */
export const WAREHOUSE_CLOSED = 'warehouse closed for order B';

export function freshWorld(): World {
  return { warehouseBClosed: false, supplierVersions: { acme: 1, globex: 1 } };
}

const worlds = new Map<string, World>();

/** A fresh world for `runId`, the one its hooks read from now on. */
export function openWorld(runId: string): World {
  const world = freshWorld();
  worlds.set(runId, world);
  return world;
}

/** The world of the run a hook is validating (a run without one is a bug of the test: the hook fails). */
function worldOf(ctx: ToolHookContext): World {
  const world = worlds.get(ctx.plan.runId);
  if (world === undefined) throw new Error(`no world for run ${ctx.plan.runId}`);
  return world;
}

const ship = defineTool({
  name: 'ship',
  title: 'Ship order',
  effect: 'write',
  args: z.strictObject({ order: choice(['A', 'B']) }),
  checks: async (args, ctx) =>
    args.order === 'B' && worldOf(ctx).warehouseBClosed ? [WAREHOUSE_CLOSED] : [],
});

const pay = defineTool({
  name: 'pay',
  title: 'Pay supplier',
  effect: 'irreversible',
  args: z.strictObject({ to: choice(SUPPLIERS), amount: money() }),
  preview: async (args, ctx) => ({
    target: { type: 'supplier', id: args.to, version: String(worldOf(ctx).supplierVersions[args.to]) },
    changes: [
      { path: 'supplier.paid', label: 'paid to the supplier (cents)', before: 0, after: args.amount },
    ],
    related: [],
    invariants: [],
  }),
});

const note = defineTool({
  name: 'note',
  title: 'Post note',
  effect: 'write',
  args: z.strictObject({ text: choice(['hi', 'bye']), urgent: z.boolean().optional() }),
});

export const modelConfig = defineConfig({
  tools: [ship, pay, note],
  agents: { [AGENT]: { tools: ['ship', 'pay', 'note'], channel: 'C0MODEL', secret: SECRET } },
  groups: GROUPS,
  policy: [
    rule(note, { name: 'quiet-notes', when: (args) => args.urgent !== true, route: 'auto', continue: true }),
    rule(note, { name: 'urgent-notes', route: 'review', approvers: 'fin' }),
    rule(pay, {
      name: 'huge-payments',
      when: (args) => args.amount >= HUGE_PAYMENT,
      route: 'block',
      reason: 'payments from $1,000 go through the bank portal',
    }),
    rule(pay, {
      name: 'large-payments',
      when: (args) => args.amount >= LARGE_PAYMENT,
      route: 'review',
      approvers: 'fin',
      approvals: 3,
      distinctFromAuthor: true,
      escalatedMayApprove: false,
    }),
    rule(pay, {
      name: 'payments',
      route: 'review',
      approvers: 'fin',
      approvals: 2,
      distinctFromAuthor: true,
    }),
    rule(ship, { name: 'shipping', route: 'review', approvers: 'ops', continue: true }),
  ],
  internalTools: ['ship', 'note'],
  authoring: AUTHORING,
  escalation: {
    [AGENT]: {
      levels: [
        { after: '15m', notify: 'lead', may: LEVELS[0]!.may },
        { after: '45m', notify: [...LEVELS[1]!.notify], may: LEVELS[1]!.may },
      ],
    },
  },
});
