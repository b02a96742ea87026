import { describe, expect, it } from 'vitest';
import { freightPlan } from '../../examples/freight/plans.ts';
import { checkMessageBlocks } from '../../src/emulator/block-kit-limits.ts';
import { buildApprovalCard } from '../../views/card.ts';
import { peopleList } from '../../views/people.ts';
import { renderStep } from '../../views/step-section.ts';
import {
  agentVersion,
  approval,
  FREIGHT_USERS,
  freightConfig,
  freightEdit,
  freightV1,
  mrkdwnTexts,
  NOW,
  orderArgs,
  runView,
  shopConfig,
  shopRun,
  unescapedMarkup,
  validPlan,
} from './fixtures.ts';

type Block = {
  type: string;
  text?: { text: string };
  elements?: unknown[];
  accessory?: { action_id?: string };
};
const blocksOf = (message: { blocks: readonly unknown[] }) => message.blocks as Block[];
const textOf = (message: { blocks: readonly unknown[] }) =>
  mrkdwnTexts(message.blocks)
    .map((t) => t.text)
    .join('\n');
/** Every button: the actions blocks' and the sections' accessories (a step's `show_args`). */
const actionIds = (message: { blocks: readonly unknown[] }) =>
  blocksOf(message).flatMap((block) => [
    ...(block.type === 'actions'
      ? (block.elements as { action_id: string }[]).map((element) => element.action_id)
      : []),
    ...(block.accessory?.action_id === undefined ? [] : [block.accessory.action_id]),
  ]);
/** The section of step `id`, whose first line names it ("*2. Reschedule delivery* · `s2`"). */
const stepText = (message: { blocks: readonly unknown[] }, id: string) =>
  mrkdwnTexts(message.blocks)
    .map((t) => t.text)
    .find((text) => new RegExp(`^\\*\\d+\\. .* · \`${id}\``).test(text));

describe('approval card', () => {
  it('renders the freight plan: agent words apart from steps, readable args, progress, ids and buttons', () => {
    const v1 = freightV1();
    const run = runView(v1, { approvals: [approval(v1.plan.steps[1]!, 'U0OP1')] });
    const card = buildApprovalCard({ run, config: freightConfig, now: NOW });
    expect(checkMessageBlocks(card.blocks)).toEqual([]);
    expect(card).toMatchInlineSnapshot(`
      {
        "blocks": [
          {
            "text": {
              "emoji": true,
              "text": "📋 freight-ops plan, 3 steps — awaiting approval",
              "type": "plain_text",
            },
            "type": "header",
          },
          {
            "text": {
              "text": "🕓 *Waiting for* <@U0OP1> or <@U0OP2> to approve \`s3\` (0 of 1 operators approval)",
              "type": "mrkdwn",
            },
            "type": "section",
          },
          {
            "text": {
              "text": "💬 *The agent says:*
      >Ticket #74991: missed pallet delivery. Rebook it and tell the customer.
      _Context from the agent:_ ticket_id: 74991 · customer: Marta Lind · account: Nordvik Logistics",
              "type": "mrkdwn",
            },
            "type": "section",
          },
          {
            "type": "divider",
          },
          {
            "text": {
              "text": "*1. Add internal note* · \`s1\`
      Ticket: 74991
      Note:
      >Customer reports the pallet delivery on 2 April was missed; driver logged no attempt.
      ⚪ No approval needed (policy notes-auto)",
              "type": "mrkdwn",
            },
            "type": "section",
          },
          {
            "accessory": {
              "action_id": "show_args",
              "text": {
                "emoji": true,
                "text": "Arguments",
                "type": "plain_text",
              },
              "type": "button",
              "value": "{"r":"run-freight-1","v":1,"s":"s2"}",
            },
            "text": {
              "text": "*2. Reschedule delivery* · \`s2\`
      ⚠️ *Breaks:* delivery stays inside the customer’s booked window — booked window Mon 30 Mar – Thu 2 Apr; new date Fri 3 Apr
      ❔ *Unknown impact on* Ticket #74991 (observed in the data) — open ticket of Nordvik Logistics: "Pallet delivery missed, please reschedule"
      🎯 *Delivery dl_55120 for Nordvik Logistics* · read at version \`7\`
      • *delivery date used for the driver’s route* (\`delivery.date\`): Thu 2 Apr → Fri 3 Apr
      _Also touches:_
      • Driver route OSL-N-12 — written (declared by the tool): the pallet leaves the Thu 2 Apr route and joins the Fri 3 Apr one
      • Nordvik Logistics — event sent (declared by the tool): the customer is sent a new delivery notice
      📝 Move delivery dl_55120 to Fri 3 Apr
      ✅ 1 of 1 operators approval · approved by <@U0OP1>",
              "type": "mrkdwn",
            },
            "type": "section",
          },
          {
            "text": {
              "text": "*3. Reply to customer* · \`s3\` · ⚠️ *Irreversible*
      Ticket: 74991
      Reply:
      >Hi Marta, sorry about the missed delivery. We have rebooked it for Friday 3 April, before noon.
      👥 0 of 1 operators approval",
              "type": "mrkdwn",
            },
            "type": "section",
          },
          {
            "elements": [
              {
                "text": "Run \`run-freight-1\` · version 1 · plan \`629adc6d9ea0\` · expires 12:00 UTC (in 2 h)",
                "type": "mrkdwn",
              },
            ],
            "type": "context",
          },
          {
            "elements": [
              {
                "action_id": "approve",
                "confirm": {
                  "confirm": {
                    "emoji": true,
                    "text": "Approve",
                    "type": "plain_text",
                  },
                  "deny": {
                    "emoji": true,
                    "text": "Cancel",
                    "type": "plain_text",
                  },
                  "style": "danger",
                  "text": {
                    "emoji": true,
                    "text": "Reply on ticket #74991 — cannot be undone",
                    "type": "plain_text",
                  },
                  "title": {
                    "emoji": true,
                    "text": "Approve an irreversible step?",
                    "type": "plain_text",
                  },
                },
                "style": "primary",
                "text": {
                  "emoji": true,
                  "text": "Approve",
                  "type": "plain_text",
                },
                "type": "button",
                "value": "{"r":"run-freight-1","v":1}",
              },
              {
                "action_id": "reject",
                "style": "danger",
                "text": {
                  "emoji": true,
                  "text": "Reject",
                  "type": "plain_text",
                },
                "type": "button",
                "value": "{"r":"run-freight-1","v":1}",
              },
              {
                "action_id": "edit",
                "text": {
                  "emoji": true,
                  "text": "Edit",
                  "type": "plain_text",
                },
                "type": "button",
                "value": "{"r":"run-freight-1","v":1}",
              },
            ],
            "type": "actions",
          },
        ],
        "text": "freight-ops plan awaiting approval: 3 steps (run run-freight-1, version 1)",
      }
    `);
  });

  it('says "changed by" for an edited step and "written by" for a version stored before the kind was kept', () => {
    const { current } = freightEdit();
    // s2's delivery window moved; s4 (the refund) was added.
    const changed = buildApprovalCard({ run: runView(current), config: freightConfig, now: NOW });
    expect(stepText(changed, 's2')).toContain('\n✏️ changed by <@U0FIN1> in v2');
    const legacy: typeof current = {
      ...current,
      provenance: { ...current.provenance, s4: { by: 'user', userId: 'U0FIN1', version: 2 } },
    };
    const text = textOf(buildApprovalCard({ run: runView(legacy), config: freightConfig, now: NOW }));
    expect(text).toContain('✏️ written by <@U0FIN1> in v2');
  });

  it('shows who wrote a step, its annotations and what each touched step still needs after an edit', () => {
    const { current } = freightEdit();
    const run = runView(current, { approvals: [approval(current.plan.steps[3]!, 'U0FIN2', 2)] });
    const card = buildApprovalCard({ run, config: freightConfig, now: NOW });
    const text = textOf(card);
    // The refund's change set says what it does; its arguments, in one line, follow (all behind show_args).
    expect(stepText(card, 's4')).toContain(
      '• *balance the customer still owes* (`invoice.balance`): $1,489.00 → $0.00',
    );
    expect(stepText(card, 's4')).toContain('\n📝 Refund $1,489.00 on invoice in_74119\n');
    expect(text).toContain(
      '👥 1 of 2 finance approvals · approved by <@U0FIN2> · not by <@U0FIN1> (its author)',
    );
    expect(text).toContain('✏️ added by <@U0FIN1> in v2');
    expect(text).toContain(
      '⚠️ invoice in_74119 belongs to Halvorsen Freight, not Nordvik Logistics (the account on ticket #74991)',
    );
    expect(text).toContain(
      '🕓 *Waiting for* <@U0OP1> or <@U0OP2> to approve `s2`, `s3` (0 of 1 operators approval) · <@U0FIN3> to approve `s4` (1 of 2 finance approvals)',
    );
    expect(stepText(card, 's2')).toContain(
      '• *delivery date used for the driver’s route* (`delivery.date`): Thu 2 Apr → Sat 4 Apr',
    );
    expect(checkMessageBlocks(card.blocks)).toEqual([]);
  });

  it('puts the run and version in every button value', () => {
    const { current } = freightEdit();
    const card = buildApprovalCard({ run: runView(current), config: freightConfig, now: NOW });
    const actions = blocksOf(card).find((block) => block.type === 'actions')!;
    expect(actions.elements).toMatchObject([
      { action_id: 'approve', value: '{"r":"run-freight-1","v":2}' },
      { action_id: 'reject', value: '{"r":"run-freight-1","v":2}' },
      { action_id: 'edit', value: '{"r":"run-freight-1","v":2}' },
    ]);
  });

  describe('after a decision, updated in place', () => {
    const v1 = freightV1();
    const decidedAt = NOW + 65 * 60_000;

    it('says who approved and when, with each step’s approvers, and drops the buttons', () => {
      const run = runView(v1, {
        status: 'approved',
        decidedBy: 'U0OP2',
        decidedAt,
        approvals: [approval(v1.plan.steps[1]!, 'U0OP2'), approval(v1.plan.steps[2]!, 'U0OP2')],
      });
      const card = buildApprovalCard({
        run,
        config: freightConfig,
        now: decidedAt,
        outcomes: [
          { stepId: 's1', status: 'applied', at: decidedAt + 60_000 },
          { stepId: 's2', status: 'failed', detail: 'carrier API <timeout>', at: decidedAt + 60_000 },
        ],
      });
      expect(blocksOf(card)[0]!.text!.text).toBe('✅ freight-ops plan, 3 steps — approved');
      expect(textOf(card)).toContain(
        '✅ *Approved* by <@U0OP2> at Wed 1 Apr 2026, 11:05 UTC. The agent may now run these steps.\n📊 *1 of 3 applied · 1 failed · 1 not reported*',
      );
      expect(textOf(card)).toContain('✅ 1 of 1 operators approval · approved by <@U0OP2>');
      expect(textOf(card)).toContain('✔️ *Applied* at Wed 1 Apr 2026, 11:06 UTC');
      expect(textOf(card)).toContain('❌ *Failed* at Wed 1 Apr 2026, 11:06 UTC: carrier API &lt;timeout&gt;');
      expect(textOf(card)).toContain('◻️ Not reported yet');
      // Decided: no countdown, no "(in 2 h)", no time that only reads right on the day it was drawn.
      expect(textOf(card)).not.toMatch(/expires|\(in |ago\)/);
      expect(actionIds(card)).toEqual([]);
      expect(card.text).toBe('freight-ops plan approved: 3 steps (run run-freight-1, version 1)');
      expect(checkMessageBlocks(card.blocks)).toEqual([]);
    });

    it('gives the rejection reason, escaped and quoted', () => {
      const run = runView(v1, {
        status: 'rejected',
        decidedBy: 'U0OP1',
        decidedAt,
        reason: 'Wrong customer <!here>',
      });
      const card = buildApprovalCard({ run, config: freightConfig, now: decidedAt });
      expect(textOf(card)).toContain(
        '❌ *Rejected* by <@U0OP1> at Wed 1 Apr 2026, 11:05 UTC — nothing will be executed.\n>Wrong customer &lt;!here&gt;',
      );
      expect(actionIds(card)).toEqual([]);
    });

    it('says an expired plan ran nothing', () => {
      const run = runView(v1, { status: 'expired', decidedBy: 'timer', decidedAt: NOW + 2 * 3_600_000 });
      const card = buildApprovalCard({ run, config: freightConfig, now: NOW + 2 * 3_600_000 });
      expect(blocksOf(card)[0]!.text!.text).toBe('⌛ freight-ops plan, 3 steps — expired');
      expect(textOf(card)).toContain('⌛ *Expired* at Wed 1 Apr 2026, 12:00 UTC — nothing was executed.');
      expect(textOf(card)).not.toContain('(now)');
      expect(actionIds(card)).toEqual([]);
    });

    it('says an invalid plan was refused', () => {
      const run = runView(v1, { status: 'invalid', reason: 'the invoice no longer exists' });
      const card = buildApprovalCard({ run, config: freightConfig, now: NOW });
      expect(textOf(card)).toContain(
        '🚫 *Invalid* — the plan was refused; nothing was executed.\n>the invoice no longer exists',
      );
      expect(actionIds(card)).toEqual([]);
    });
  });

  it('marks a superseded version and points to the current one, without buttons', () => {
    const { previous, current } = freightEdit();
    const card = buildApprovalCard({
      run: runView(current),
      version: previous,
      config: freightConfig,
      now: NOW,
    });
    expect(blocksOf(card)[0]!.text!.text).toBe('⏭️ freight-ops plan, 3 steps — version 1 (superseded)');
    expect(textOf(card)).toContain(
      '⏭️ *Superseded by version 2* — see the thread. Buttons here no longer act.',
    );
    expect(textOf(card)).toContain('New delivery date: Fri 3 Apr 2026');
    expect(actionIds(card)).toEqual([]);
  });

  it('says who the run was escalated to', () => {
    const run = runView(freightV1(), { escalatedTo: ['U0LEAD1'], escalationLevel: 1 });
    const card = buildApprovalCard({ run, config: freightConfig, now: NOW });
    expect(textOf(card)).toContain(
      '⏫ Escalated to <@U0LEAD1> (level 1): may approve operators steps (each approval counts as one of the group’s; irreversible steps included).',
    );
  });

  it('shows a blocked step clearly and has the Approve button explain that it cannot complete', () => {
    const run = shopRun([
      { id: 's1', tool: 'update_order', args: orderArgs },
      { id: 's2', tool: 'wire_funds', args: { amount: 250_000, iban: 'NO9386011117947' } },
    ]);
    const card = buildApprovalCard({ run, config: shopConfig, now: NOW });
    expect(textOf(card)).toContain(
      "⛔ Blocked: no policy rule covers tool wire_funds — the plan can't be approved while this step is in it",
    );
    expect(textOf(card)).toContain(
      "⛔ *Can't be approved while step `s2` is in the plan:* no policy rule covers tool wire_funds. Edit the plan to remove it.",
    );
    const approve = (blocksOf(card).find((block) => block.type === 'actions')!.elements as unknown[])[0];
    expect(approve).toMatchInlineSnapshot(`
      {
        "action_id": "approve",
        "confirm": {
          "confirm": {
            "emoji": true,
            "text": "Record my approval",
            "type": "plain_text",
          },
          "deny": {
            "emoji": true,
            "text": "Cancel",
            "type": "plain_text",
          },
          "text": {
            "emoji": true,
            "text": "Step 2 (s2, Wire funds) is blocked: no policy rule covers tool wire_funds. Your approval of the other steps is recorded, but the plan stays pending until the blocked step is removed with Edit.",
            "type": "plain_text",
          },
          "title": {
            "emoji": true,
            "text": "This plan can't be approved yet",
            "type": "plain_text",
          },
        },
        "style": "primary",
        "text": {
          "emoji": true,
          "text": "Approve (blocked step)",
          "type": "plain_text",
        },
        "type": "button",
        "value": "{"r":"run-shop-1","v":1}",
      }
    `);
    expect(checkMessageBlocks(card.blocks)).toEqual([]);
  });

  it('renders every kind of argument readably', () => {
    const run = shopRun([{ id: 's1', tool: 'update_order', args: orderArgs }]);
    const card = buildApprovalCard({ run, config: shopConfig, now: NOW });
    expect(blocksOf(card)[3]!.text!.text).toMatchInlineSnapshot(`
      "*1. Update order* · \`s1\`
      Order: ord_1001
      Note:
      >Leave at the back door.
      >Ring twice.
      Quantity: 3
      Unit price: €19.99
      Fee: ¥500
      Shipping speed: express
      Ship on: Thu 2 Apr 2026
      Deliver by: Fri 3 Apr 2026, 16:30 UTC
      Gift: yes
      Contact: ops@example.com
      Tracking url: _(empty)_
      Address › City: Oslo
      Address › Postcode: 0150
      Tags 1: fragile
      Tags 2: heavy
      Reference: 42
      👥 0 of 1 ops approval"
    `);
  });
});

describe('approval card limits', () => {
  const manySteps = (count: number) =>
    Array.from({ length: count }, (_, i) => ({
      id: `s${i + 1}`,
      tool: i % 2 === 0 ? 'update_order' : 'wire_funds',
      args:
        i % 2 === 0
          ? { ...orderArgs, order_id: `ord_${i + 1}` }
          : { amount: 1000 * (i + 1), iban: `NO93860111179${i}` },
    }));

  it('renders a 60-step plan within 50 blocks, summarizing the rest as "…and N more steps"', () => {
    const run = shopRun(manySteps(60));
    const card = buildApprovalCard({ run, config: shopConfig, now: NOW });
    expect(checkMessageBlocks(card.blocks)).toEqual([]);
    expect(card.blocks).toHaveLength(50);
    const more = blocksOf(card).at(-3)!.text!.text;
    expect(more.split('\n')[0]).toBe('*…and 16 more steps*, listed briefly (Edit shows every step in full):');
    expect(more).toContain('45. Update order · `s45` — 0 of 1 ops');
    expect(more).toContain('46. Wire funds · `s46` · ⚠️ *Irreversible* — ⛔ blocked');
    expect(more.length).toBeLessThanOrEqual(3000);
  });

  it('renders a 500-step plan within limits, saying how many steps it could not list', () => {
    const run = shopRun(manySteps(500));
    const card = buildApprovalCard({ run, config: shopConfig, now: NOW });
    expect(checkMessageBlocks(card.blocks)).toEqual([]);
    const more = blocksOf(card).at(-3)!.text!.text;
    expect(more).toMatch(/\n…and \d+ more steps$/);
    // Every blocked step is named in the status section, within its 3000 characters.
    expect(blocksOf(card)[1]!.text!.text.length).toBeLessThanOrEqual(3000);
  });

  it('cuts long values within a section’s 3000 characters and says what it cut', () => {
    const base = freightPlan({ now: NOW });
    const plan = validPlan({
      ...base,
      summary: 'S'.repeat(3000),
      steps: [
        { id: 's1', tool: 'add_note', args: { ticket_id: '74991', note: 'N'.repeat(2000) } },
        { id: 's2', tool: 'send_reply', args: { ticket_id: '74991', body: 'B&'.repeat(1000) } },
      ],
    });
    const card = buildApprovalCard({ run: runView(agentVersion(plan)), config: freightConfig, now: NOW });
    expect(checkMessageBlocks(card.blocks)).toEqual([]);
    const text = textOf(card);
    expect(text).toContain('more characters)');
    for (const { text: section } of mrkdwnTexts(card.blocks))
      expect(section.length).toBeLessThanOrEqual(3000);
    expect(unescapedMarkup(text, FREIGHT_USERS)).toEqual([]);
  });

  it('keeps one step within a section whatever it carries, cutting arguments first', () => {
    const step = validPlan(freightPlan({ now: NOW })).steps[2]!;
    const users = Array.from({ length: 40 }, (_, i) => `U0USER${i}`);
    const text = renderStep({
      step: {
        ...step,
        args: { ticket_id: '74991', body: '<!channel> '.repeat(300) },
        annotations: Array.from({ length: 30 }, () => ({
          level: 'warning' as const,
          message: '&'.repeat(1000),
        })),
      },
      position: 3,
      tool: freightConfig.pipeline.tools.get('send_reply'),
      standing: {
        kind: 'review',
        group: 'finance',
        have: 40,
        need: 2,
        approvers: users,
        done: true,
        distinctFromAuthor: true,
      },
      provenance: { by: 'user', userId: 'U0OP1', version: 2 },
      outcome: { stepId: 's3', status: 'uncertain', detail: '<@U999> '.repeat(1000), at: NOW },
    });
    expect(text.length).toBeLessThanOrEqual(3000);
    expect(text).toContain('…and 29 more notes');
    expect(text).toContain('+35 more');
    expect(unescapedMarkup(text, [...users, 'U0OP1'])).toEqual([]);
  });
});

describe('a failed re-check at approval', () => {
  it('says on the card why the plan was not approved, escaped', () => {
    const run = { ...runView(freightV1()), recheckProblem: 'step s2: amount exceeds the balance <!channel>' };
    const text = textOf(buildApprovalCard({ run, config: freightConfig, now: NOW }));
    expect(text).toContain(
      '*Not approved:* the checks were run again when the last approval came in, and failed',
    );
    expect(text).toContain('&lt;!channel&gt;');
  });
});

describe('the card names people and tells what ran', () => {
  const names = {
    U0OP1: 'Dana Ortiz',
    U0OP2: 'Omar Berg',
    U0FIN1: 'Sam Lindqvist',
    U0FIN2: 'Fay Chen',
    U0FIN3: 'Ravi Nair',
  };
  const { current } = freightEdit();
  const [, s2, s3, s4] = current.plan.steps;
  const confirmOf = (message: { blocks: readonly unknown[] }) => {
    const actions = blocksOf(message).find((block) => block.type === 'actions');
    const approve = (actions?.elements ?? [])[0] as { confirm?: unknown } | undefined;
    return approve?.confirm as { title: { text: string }; text: { text: string } } | undefined;
  };

  it('names who can act on each waiting step (never the author where barred), not the config group', () => {
    const run = runView(current, { approvals: [approval(s4!, 'U0FIN2', 2)] });
    const text = textOf(buildApprovalCard({ run, config: freightConfig, now: NOW, names }));
    expect(text).toContain(
      '🕓 *Waiting for* Dana Ortiz or Omar Berg to approve `s2`, `s3` (0 of 1 operators approval) · Ravi Nair to approve `s4` (1 of 2 finance approvals)',
    );
    expect(text).toContain('approved by Fay Chen · not by Sam Lindqvist (its author)');
  });

  it('names up to five people, then says how many more', () => {
    expect(peopleList(['U1', 'U2', 'U3', 'U4', 'U5', 'U6', 'U7'], { U1: 'Ann' }, { conjunction: 'or' })).toBe(
      'Ann, <@U2>, <@U3>, <@U4>, <@U5> +2 more',
    );
    expect(peopleList(['U1', 'U2'], { U1: 'Ann', U2: 'Bo' }, { conjunction: 'or' })).toBe('Ann or Bo');
    expect(peopleList(['U1', 'U2', 'U3'], { U1: '*Ann*' })).toBe(
      '\u200B*\u200BAnn\u200B*\u200B, <@U2> and <@U3>',
    );
  });

  it('after approval names everyone whose approval counted, not only the last click, with no relative times', () => {
    const run = runView(current, {
      status: 'approved',
      decidedBy: 'U0FIN3',
      decidedAt: NOW + 30 * 60_000,
      approvals: [
        approval(s2!, 'U0OP1', 2),
        approval(s3!, 'U0OP1', 2),
        approval(s4!, 'U0FIN2', 2),
        approval(s4!, 'U0FIN3', 2),
      ],
    });
    const card = buildApprovalCard({ run, config: freightConfig, now: NOW + 31 * 60_000, names });
    expect(textOf(card)).toContain(
      '✅ *Approved* by Dana Ortiz, Fay Chen and Ravi Nair at Wed 1 Apr 2026, 10:30 UTC.',
    );
    expect(textOf(card)).not.toMatch(/\((in|now)|ago\)|expires/);
  });

  it('shows each reported outcome, uncertain ones as needing reconciliation, and the tally', () => {
    const v1 = freightV1();
    const run = runView(v1, { status: 'approved', decidedBy: 'U0OP1', decidedAt: NOW });
    const at = NOW + 60_000;
    const outcomes = [
      { stepId: 's1', status: 'applied' as const, detail: 'note 8812', at },
      { stepId: 's2', status: 'uncertain' as const, at },
      { stepId: 's3', status: 'applying' as const, at },
    ];
    const text = textOf(buildApprovalCard({ run, config: freightConfig, now: at, outcomes }));
    expect(text).toContain('✔️ *Applied* at Wed 1 Apr 2026, 10:01 UTC: note 8812');
    expect(text).toContain(
      '❓ *Uncertain — needs reconciliation, will not be re-run* (started Wed 1 Apr 2026, 10:01 UTC, never reported back)',
    );
    expect(text).toContain('⏳ *Applying* since Wed 1 Apr 2026, 10:01 UTC');
    expect(text).toContain('📊 *1 of 3 applied · 1 uncertain · 1 applying*');
    const done = outcomes.map((outcome) => ({ ...outcome, status: 'applied' as const }));
    expect(textOf(buildApprovalCard({ run, config: freightConfig, now: at, outcomes: done }))).toContain(
      '📊 *3 of 3 applied*',
    );
  });

  it('asks to confirm an approval that covers an irreversible step, naming each effect in the tool’s words', () => {
    const run = runView(current, { approvals: [approval(s4!, 'U0FIN2', 2)] });
    const confirm = confirmOf(buildApprovalCard({ run, config: freightConfig, now: NOW }));
    expect(confirm?.title.text).toBe('Approve 2 irreversible steps?');
    expect(confirm?.text.text).toBe(
      'Reply on ticket #74991 — cannot be undone\nRefund $1,489.00 on invoice in_74119 — cannot be undone',
    );
    // Once the irreversible steps have their approvals, approving the rest covers none of them.
    const covered = runView(current, {
      approvals: [approval(s3!, 'U0OP2', 2), approval(s4!, 'U0FIN2', 2), approval(s4!, 'U0FIN3', 2)],
    });
    expect(confirmOf(buildApprovalCard({ run: covered, config: freightConfig, now: NOW }))).toBeUndefined();
  });
});
