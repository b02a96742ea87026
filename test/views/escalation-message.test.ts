import { describe, expect, it } from 'vitest';
import { freightPlan } from '../../examples/freight/plans.ts';
import { checkMessageBlocks } from '../../src/emulator/block-kit-limits.ts';
import { buildApprovalCard } from '../../views/card.ts';
import { buildEscalationMessage, type EscalationMessageModel } from '../../views/escalation-message.ts';
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

type Button = { action_id?: string; value?: string };
type Block = { type: string; elements?: Button[]; accessory?: Button };
const textOf = (message: { blocks: readonly unknown[] }) =>
  mrkdwnTexts(message.blocks)
    .map((t) => t.text)
    .join('\n');
/** Every button, in order: the sections' accessories (a step's `show_args`) and the actions blocks'. */
const buttons = (message: { blocks: readonly unknown[] }) =>
  (message.blocks as Block[])
    .flatMap((block) => [
      ...(block.accessory === undefined ? [] : [block.accessory]),
      ...(block.type === 'actions' ? (block.elements ?? []) : []),
    ])
    .map((e) => ({ id: e.action_id, value: e.value }));

const level1 = (overrides: Partial<EscalationMessageModel> = {}): EscalationMessageModel => ({
  run: runView(freightV1(), { escalatedTo: ['U0LEAD1'], escalationLevel: 1 }),
  step: { kind: 'escalation', level: 1 },
  notified: ['U0LEAD1'],
  group: 'leads',
  may: freightConfig.escalation['freight-ops']!.levels[0]!.may!,
  cardChannel: 'C0OPS',
  config: freightConfig,
  now: NOW + 15 * 60_000,
  ...overrides,
});

describe('escalation message', () => {
  it('tells the lead what waits, shows the steps that need a person in full, and offers the card’s buttons', () => {
    const message = buildEscalationMessage(level1());
    expect(checkMessageBlocks(message.blocks)).toEqual([]);
    expect(message).toMatchInlineSnapshot(`
      {
        "blocks": [
          {
            "text": {
              "text": "⏫ *Escalated to <@U0LEAD1>* (leads, level 1): a freight-ops plan has waited since 10:00 UTC for <@U0OP1>, <@U0OP2> or <@U0LEAD1> to approve \`s2\`, \`s3\` (0 of 1 operators approval). As escalated to you, you may approve operators steps (each approval counts as one of the group’s; irreversible steps included); approve, reject or edit it here.",
              "type": "mrkdwn",
            },
            "type": "section",
          },
          {
            "text": {
              "text": "💬 _The agent says:_
      >Ticket #74991: missed pallet delivery. Rebook it and tell the customer.",
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
      👥 0 of 1 operators approval",
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
            "text": {
              "text": "*Also in the plan* (1 step):
      1. Add internal note · \`s1\`: Note on ticket #74991 — no approval needed",
              "type": "mrkdwn",
            },
            "type": "section",
          },
          {
            "elements": [
              {
                "text": "Run \`run-freight-1\` · version 1 · plan \`629adc6d9ea0\` · expires 12:00 UTC (in 1 h 45 min) · the card in <#C0OPS>",
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
        "text": "Escalated (level 1): freight-ops plan waiting for approval (run run-freight-1, version 1)",
      }
    `);
    const card = buildApprovalCard({ run: level1().run, config: freightConfig, now: NOW });
    expect(buttons(message)).toEqual(buttons(card));
  });

  it('says when the escalation only asks to follow up, naming the groups whose approvals are awaited', () => {
    const { may: _, ...withoutGrant } = level1();
    expect(textOf(buildEscalationMessage(withoutGrant))).toContain(
      'This escalation asks you to follow up: it lets you approve nothing yourself (approvals come from operators).',
    );
  });

  it('labels a re-notification of the last level and names people given by id', () => {
    const message = buildEscalationMessage(
      level1({ step: { kind: 'escalation', level: 2, repeat: 1 }, notified: ['U0LEAD1', 'U0OP1'] }),
    );
    const { group: _group, ...withoutGroup } = level1();
    const byIds = buildEscalationMessage({
      ...withoutGroup,
      step: { kind: 'escalation', level: 2 },
      notified: ['U0LEAD1'],
    });
    expect(textOf(message)).toMatch(
      /^⏫ \*Escalated to <@U0LEAD1> and <@U0OP1>\* \(leads, level 2, repeat 1\)/,
    );
    expect(textOf(byIds)).toMatch(
      /^⏫ \*Escalated to <@U0LEAD1>\* \(level 2\): a freight-ops plan has waited/,
    );
    expect(message.text).toBe(
      'Escalated (level 2, repeat 1): freight-ops plan waiting for approval (run run-freight-1, version 1)',
    );
  });

  it('words the reminder to the card’s channel as a reminder', () => {
    const message = buildEscalationMessage(level1({ step: { kind: 'reminder' }, notified: [] }));
    expect(textOf(message)).toMatch(
      /^⏰ \*Reminder\*: a freight-ops plan has waited since 10:00 UTC for <@U0OP1>, <@U0OP2> or <@U0LEAD1> to approve `s2`, `s3` \(0 of 1 operators approval\)\. Approve, reject or edit it here or on the card\./,
    );
    // s2's `show_args` (its change set is shown in full), then the card's buttons.
    expect(buttons(message).map((b) => b.id)).toEqual(['show_args', 'approve', 'reject', 'edit']);
  });

  it('once decided, shows the outcome and no buttons', () => {
    const v1 = freightV1();
    const run = runView(v1, {
      status: 'approved',
      decidedBy: 'U0LEAD1',
      decidedAt: NOW + 20 * 60_000,
      escalatedTo: ['U0LEAD1'],
      approvals: [approval(v1.plan.steps[1]!, 'U0LEAD1'), approval(v1.plan.steps[2]!, 'U0LEAD1')],
    });
    const message = buildEscalationMessage(level1({ run }));
    expect(checkMessageBlocks(message.blocks)).toEqual([]);
    expect(buttons(message)).toEqual([]);
    expect(textOf(message)).toContain(
      '✅ *Approved* by <@U0LEAD1> at Wed 1 Apr 2026, 10:20 UTC. The agent may now run these steps.',
    );
    expect(message.text).toBe(
      'Escalated (level 1): freight-ops plan approved (run run-freight-1, version 1)',
    );

    const expired = buildEscalationMessage(
      level1({ run: runView(v1, { status: 'expired', decidedBy: 'timer', decidedAt: NOW + 7_200_000 }) }),
    );
    expect(textOf(expired)).toContain('⌛ *Expired* at Wed 1 Apr 2026, 12:00 UTC — nothing was executed.');
    expect(buttons(expired)).toEqual([]);
  });

  it('links "the card" to its permalink when it is known, and never to a URL that could break the link', () => {
    const link = 'https://acme.slack.com/archives/C0OPS/p1775037600000100';
    expect(textOf(buildEscalationMessage(level1({ cardLink: link })))).toContain(
      `<${link}|the card> in <#C0OPS>`,
    );
    const forged = textOf(buildEscalationMessage(level1({ cardLink: 'https://x.example/|<!channel>' })));
    expect(forged).toContain('· the card in <#C0OPS>');
    expect(forged).not.toContain('x.example');
  });

  it('for a superseded version points at the card and has no buttons', () => {
    const { previous, current } = freightEdit();
    const message = buildEscalationMessage(level1({ run: runView(current), version: previous }));
    expect(textOf(message)).toContain(
      '⏭️ *Superseded by version 2* — the card in <#C0OPS> shows it. Buttons here no longer act.',
    );
    expect(buttons(message)).toEqual([]);
  });

  it('shows blocked steps in full: the run cannot be approved while they are there', () => {
    const run = shopRun([
      { id: 's1', tool: 'update_order', args: orderArgs },
      { id: 's2', tool: 'wire_funds', args: { amount: 250_000, iban: 'NO9386011117947' } },
    ]);
    const message = buildEscalationMessage({ ...level1(), run, config: shopConfig, cardChannel: 'C0SHOP' });
    expect(checkMessageBlocks(message.blocks)).toEqual([]);
    expect(textOf(message)).toContain('⛔ Blocked: no policy rule covers tool wire_funds');
    expect(buttons(message)[0]?.id).toBe('approve');
  });

  it('stays compact for a large plan: 8 steps in full, the rest one line each, within Block Kit limits', () => {
    const steps = Array.from({ length: 120 }, (_, i) => ({
      id: `s${i + 1}`,
      tool: 'update_order',
      args: { ...orderArgs, order_id: `ord_${i + 1}` },
    }));
    const message = buildEscalationMessage({ ...level1(), run: shopRun(steps), config: shopConfig });
    expect(checkMessageBlocks(message.blocks)).toEqual([]);
    expect(message.blocks.length).toBeLessThanOrEqual(14);
    expect(textOf(message)).toContain('*Also in the plan* (112 steps):');
    expect(textOf(message)).toMatch(/…and \d+ more steps/);
  });

  it('escapes everything the plan says', () => {
    const plan = validPlan({
      ...freightPlan({ now: NOW }),
      summary: 'Ping <!channel> & <@U0FIN1> — see <http://evil.example|the invoice>',
    });
    const run = runView(agentVersion(plan));
    const message = buildEscalationMessage(level1({ run }));
    for (const { at, text } of mrkdwnTexts(message)) {
      const withoutCardLink = text.replaceAll('<#C0OPS>', '');
      expect(unescapedMarkup(withoutCardLink, FREIGHT_USERS), `${at}: ${text}`).toEqual([]);
    }
    expect(textOf(message)).toContain('&lt;!channel&gt; &amp; &lt;@U0FIN1&gt;');
  });
});

describe('the card after an escalation', () => {
  it('says who it was escalated to and when', () => {
    const run = {
      ...runView(freightV1(), { escalatedTo: ['U0LEAD1'], escalationLevel: 1 }),
      escalatedAt: NOW + 5 * 60_000,
    };
    const card = buildApprovalCard({ run, config: freightConfig, now: NOW });
    expect(textOf(card)).toContain(
      '⏫ Escalated to <@U0LEAD1> (level 1), last at 10:05 UTC: may approve operators steps (each approval counts as one of the group’s; irreversible steps included).',
    );
  });
});
