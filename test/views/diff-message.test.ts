import { describe, expect, it } from 'vitest';
import type { StoredVersion } from '../../src/approvals/types.ts';
import { checkMessageBlocks } from '../../src/emulator/block-kit-limits.ts';
import { diffPlans, type Provenance } from '../../src/pipeline/index.ts';
import { buildDiffMessage } from '../../views/diff-message.ts';
import {
  agentVersion,
  approval,
  freightConfig,
  freightEdit,
  mrkdwnTexts,
  NOW,
  orderArgs,
  runView,
  shopConfig,
  validPlan,
} from './fixtures.ts';

type Block = {
  type: string;
  text?: { text: string };
  accessory?: { action_id: string; value: string };
  elements?: unknown[];
};
const blocksOf = (message: { blocks: readonly unknown[] }) => message.blocks as Block[];
const buttons = (message: { blocks: readonly unknown[] }) =>
  blocksOf(message).flatMap((block) => [
    ...(block.accessory ? [block.accessory] : []),
    ...((block.type === 'actions' ? block.elements : []) as { action_id: string; value: string }[]),
  ]);

describe('diff message', () => {
  const edit = freightEdit();
  const model = {
    runId: 'run-freight-1',
    previous: edit.previous,
    current: edit.current,
    diff: edit.diff,
    editorId: 'U0FIN1',
    config: freightConfig,
    now: NOW + 10 * 60_000,
  };

  it('sets the added refund and its annotation apart from the changed delivery window', () => {
    const message = buildDiffMessage(model);
    expect(checkMessageBlocks(message.blocks)).toEqual([]);
    expect(message).toMatchInlineSnapshot(`
      {
        "blocks": [
          {
            "text": {
              "text": "✏️ <@U0FIN1> edited the plan: 1 step added, 1 changed → version 2",
              "type": "mrkdwn",
            },
            "type": "section",
          },
          {
            "accessory": {
              "action_id": "revert_step",
              "text": {
                "emoji": true,
                "text": "Revert step s2",
                "type": "plain_text",
              },
              "type": "button",
              "value": "{"r":"run-freight-1","v":2,"s":"s2"}",
            },
            "text": {
              "text": "✏️ *Changed step \`s2\` — Reschedule delivery*
      ⚠️ *Breaks:* delivery stays inside the customer’s booked window — booked window Mon 30 Mar – Thu 2 Apr; new date Sat 4 Apr
      ❔ *Unknown impact on* Ticket #74991 (observed in the data) — open ticket of Nordvik Logistics: "Pallet delivery missed, please reschedule"
      🎯 *Delivery dl_55120 for Nordvik Logistics* · read at version \`7\`
      • *delivery date used for the driver’s route* (\`delivery.date\`): Thu 2 Apr → Sat 4 Apr
      _Also touches:_
      • Driver route OSL-N-12 — written (declared by the tool): the pallet leaves the Thu 2 Apr route and joins the Sat 4 Apr one
      • Nordvik Logistics — event sent (declared by the tool): the customer is sent a new delivery notice
      New delivery date: Fri 3 Apr 2026 → Sat 4 Apr 2026
      👥 0 of 1 operators approval
      ✏️ changed by <@U0FIN1> in v2",
              "type": "mrkdwn",
            },
            "type": "section",
          },
          {
            "accessory": {
              "action_id": "remove_step",
              "text": {
                "emoji": true,
                "text": "Remove step s4",
                "type": "plain_text",
              },
              "type": "button",
              "value": "{"r":"run-freight-1","v":2,"s":"s4"}",
            },
            "text": {
              "text": "➕ *Added step \`s4\` — Issue refund* (position 4) · ⚠️ *Irreversible*
      ⚠️ *Breaks:* the invoice belongs to the account the ticket is about — invoice in_74119 is Halvorsen Freight's; ticket #74991 is Nordvik Logistics's
      ❔ *Unknown impact on* Ticket #74992 (observed in the data) — open ticket of Halvorsen Freight: "Invoice question"
      🎯 *Invoice in_74119 (Halvorsen Freight)* · read at version \`3\`
      • *balance the customer still owes* (\`invoice.balance\`): $1,489.00 → $0.00
      _Also touches:_
      • Card refund on in_74119 — written (declared by the tool): $1,489.00 goes back to the card that paid it; it cannot be taken back
      ✅ Keeps: the refund is no more than the invoice’s balance
      Invoice: in_74119
      Amount: $1,489.00
      👥 0 of 2 finance approvals · not by <@U0FIN1> (its author)
      ✏️ added by <@U0FIN1> in v2
      ⚠️ invoice in_74119 belongs to Halvorsen Freight, not Nordvik Logistics (the account on ticket #74991)",
              "type": "mrkdwn",
            },
            "type": "section",
          },
          {
            "accessory": {
              "action_id": "edit",
              "text": {
                "emoji": true,
                "text": "Edit s3",
                "type": "plain_text",
              },
              "type": "button",
              "value": "{"r":"run-freight-1","v":2,"s":"s3","a":"body"}",
            },
            "text": {
              "text": "⚠️ *\`s3\` still says "Friday 3 April"* (Reply); \`s2\` now says Sat 4 Apr 2026 (New delivery date). Check it before approving.",
              "type": "mrkdwn",
            },
            "type": "section",
          },
          {
            "text": {
              "text": "🔁 *Re-approval required for:* step \`s2\` (changed), step \`s4\` (added). Steps not listed keep their approvals.",
              "type": "mrkdwn",
            },
            "type": "section",
          },
          {
            "elements": [
              {
                "text": "Run \`run-freight-1\` · version 1 → 2 · plan \`84f7d5ec6437\` · edited 10:10 UTC",
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
                    "text": "Refund $1,489.00 on invoice in_74119 — cannot be undone",
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
                  "text": "Approve version 2",
                  "type": "plain_text",
                },
                "type": "button",
                "value": "{"r":"run-freight-1","v":2}",
              },
              {
                "action_id": "discard_edit",
                "style": "danger",
                "text": {
                  "emoji": true,
                  "text": "Discard this edit",
                  "type": "plain_text",
                },
                "type": "button",
                "value": "{"r":"run-freight-1","v":2}",
              },
            ],
            "type": "actions",
          },
        ],
        "text": "✏️ <@U0FIN1> edited the plan: 1 step added, 1 changed → version 2",
      }
    `);
  });

  it('carries run, version and step in every button', () => {
    expect(buttons(buildDiffMessage(model)).map(({ action_id, value }) => `${action_id} ${value}`)).toEqual([
      'revert_step {"r":"run-freight-1","v":2,"s":"s2"}',
      'remove_step {"r":"run-freight-1","v":2,"s":"s4"}',
      // The reply still says Friday 3 April: its consistency warning opens the form at s3.
      'edit {"r":"run-freight-1","v":2,"s":"s3","a":"body"}',
      'approve {"r":"run-freight-1","v":2}',
      'discard_edit {"r":"run-freight-1","v":2}',
    ]);
  });

  it('shows approvals already given on the new version while it is current', () => {
    const run = runView(edit.current, { approvals: [approval(edit.current.plan.steps[3]!, 'U0FIN2', 2)] });
    const text = mrkdwnTexts(buildDiffMessage({ ...model, run }).blocks)
      .map((t) => t.text)
      .join('\n');
    expect(text).toContain('👥 1 of 2 finance approvals · approved by <@U0FIN2>');
  });

  it('renders without buttons, pointing to the newer version, once superseded', () => {
    const v3: StoredVersion = { ...edit.current, version: 3, baseVersion: 2 };
    const message = buildDiffMessage({ ...model, run: runView(v3) });
    expect(buttons(message)).toEqual([]);
    expect(blocksOf(message)[1]!.text!.text).toBe(
      '⏭️ *Superseded by version 3* — see the thread. Buttons here no longer act.',
    );
    expect(checkMessageBlocks(message.blocks)).toEqual([]);
  });

  it('renders without buttons, with the outcome, once decided', () => {
    const run = runView(edit.current, {
      status: 'rejected',
      decidedBy: 'U0OP1',
      decidedAt: NOW + 20 * 60_000,
      reason: 'Refund goes to the wrong account',
    });
    const message = buildDiffMessage({ ...model, run });
    expect(buttons(message)).toEqual([]);
    expect(blocksOf(message)[1]!.text!.text).toBe(
      '❌ *Rejected* by <@U0OP1> at Wed 1 Apr 2026, 10:20 UTC — nothing will be executed.\n>Refund goes to the wrong account',
    );
  });

  it('lists removed and moved steps apart, and says when nothing needs approval again', () => {
    const previous = edit.previous;
    const [s1, s2, s3] = previous.plan.steps;
    const plan = validPlan(
      {
        runId: previous.plan.runId,
        agent: previous.plan.agent,
        expiresAt: previous.plan.expiresAt,
        context: previous.plan.context,
        steps: [s2!, s1!].map(({ id, tool, args }) => ({ id, tool, args })),
      },
      { edit: { editorId: 'U0OP1', base: previous.plan } },
    );
    const current: StoredVersion = {
      ...agentVersion(plan),
      version: 2,
      provenance: previous.provenance as Record<string, Provenance>,
    };
    const diff = diffPlans(previous.plan, plan);
    const message = buildDiffMessage({ ...model, current, diff, editorId: 'U0OP1' });
    const texts = blocksOf(message).map((block) => block.text?.text);
    expect(texts[0]).toBe('✏️ <@U0OP1> edited the plan: 1 step removed, 1 moved → version 2');
    expect(texts).toContain('↕️ *Moved step `s1` — Add internal note*: position 1 → 2');
    expect(texts).toContain(
      `➖ *Removed step \`s3\` — Reply to customer* (was position 3) · ⚠️ *Irreversible*\n${s3!.summary}`,
    );
    expect(texts).toContain('✅ No step needs approval again: the approvals already given still hold.');
    expect(buttons(message).map((b) => b.action_id)).toEqual(['approve', 'discard_edit']);
  });

  it('summarizes an edit with more changes than one message holds', () => {
    const steps = (count: number, quantity: number) =>
      Array.from({ length: count }, (_, i) => ({
        id: `s${i + 1}`,
        tool: 'update_order',
        args: { ...orderArgs, quantity },
      }));
    const base = { runId: 'run-shop-1', agent: 'shop', expiresAt: new Date(NOW + 3_600_000).toISOString() };
    const before = validPlan({ ...base, steps: steps(60, 1) }, { config: shopConfig, maxSteps: 100 });
    const after = validPlan(
      { ...base, steps: steps(60, 2) },
      { config: shopConfig, maxSteps: 100, edit: { editorId: 'U0OP1', base: before } },
    );
    const diff = diffPlans(before, after);
    const message = buildDiffMessage({
      runId: 'run-shop-1',
      previous: agentVersion(before),
      current: { ...agentVersion(after), version: 2 },
      diff,
      editorId: 'U0OP1',
      config: shopConfig,
      now: NOW,
    });
    expect(checkMessageBlocks(message.blocks)).toEqual([]);
    expect(message.blocks).toHaveLength(50);
    const more = blocksOf(message).find((block) => block.text?.text.startsWith('*…and'))!.text!.text;
    expect(more.split('\n')[0]).toBe('*…and 15 more changes* (edit the plan to see or undo them):');
    expect(blocksOf(message)[0]!.text!.text).toBe('✏️ <@U0OP1> edited the plan: 60 steps changed → version 2');
  });
});
