import { describe, expect, it } from 'vitest';
import { checkMessageBlocks, checkView } from '../../src/emulator/block-kit-limits.ts';
import { buildApprovalCard } from '../../views/card.ts';
import { consistencyWarningBlocks, staleQuotesSince } from '../../views/consistency-warning.ts';
import { buildEditModal } from '../../views/edit-modal.ts';
import { freightConfig, freightEdit, NOW, runView } from './fixtures.ts';

type Block = {
  type: string;
  block_id?: string;
  text?: { text: string };
  accessory?: { action_id: string; value: string; text: { text: string } };
  element?: { focus_on_load?: boolean };
};

describe('consistency warnings', () => {
  const { previous, current } = freightEdit();

  it('name the step that still quotes the old date, the new value, and offer "Edit s3" at that step', () => {
    const quotes = staleQuotesSince([previous], current, freightConfig);
    const blocks = consistencyWarningBlocks({
      runId: 'run-freight-1',
      version: 2,
      quotes,
      current,
      config: freightConfig,
      actionable: true,
    });
    expect(blocks).toMatchInlineSnapshot(`
      [
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
      ]
    `);
  });

  it('show on a pending card edited from a version whose date the reply still quotes, not once decided', () => {
    const pending = buildApprovalCard({
      run: runView(current),
      config: freightConfig,
      now: NOW + 11 * 60_000,
      earlierVersions: [previous],
    });
    expect(checkMessageBlocks(pending.blocks)).toEqual([]);
    const warning = (pending.blocks as Block[]).find((block) => block.accessory?.action_id === 'edit');
    expect(warning?.text?.text).toMatch(/`s3` still says "Friday 3 April"/);
    expect(warning?.accessory?.text.text).toBe('Edit s3');

    const decided = buildApprovalCard({
      run: runView(current, { status: 'rejected', decidedBy: 'U0OP1', decidedAt: NOW + 12 * 60_000 }),
      config: freightConfig,
      now: NOW + 13 * 60_000,
      earlierVersions: [previous],
    });
    expect(JSON.stringify(decided.blocks)).not.toMatch(/still says/);
    // Without an earlier version to compare with (the agent's own plan), there is nothing to warn about.
    const original = buildApprovalCard({ run: runView(previous), config: freightConfig, now: NOW });
    expect(JSON.stringify(original.blocks)).not.toMatch(/still says/);
  });

  it('list more than three stale steps briefly after the first two', () => {
    const quotes = ['s1', 's3', 's4', 's5'].map((stepId) => ({
      ...staleQuotesSince([previous], current, freightConfig)[0]!,
      stepId,
    }));
    const blocks = consistencyWarningBlocks({
      runId: 'run-freight-1',
      version: 2,
      quotes,
      current,
      config: freightConfig,
      actionable: false,
    }) as Block[];
    expect(blocks).toHaveLength(3);
    expect(blocks.some((block) => block.accessory !== undefined)).toBe(false);
    expect(blocks[2]?.text?.text).toMatch(/2 more steps still quote a value this edit changed:\* `s4`, `s5`/);
  });

  it('the edit form opened at s3 shows it first, with the cursor in the field that quotes the old value', () => {
    const view = buildEditModal({
      run: runView(current),
      config: freightConfig,
      editorId: 'U0OP1',
      focusStepId: 's3',
      focusField: 'arg:s3:body',
    });
    expect(checkView(view)).toEqual([]);
    const inputs = (view.blocks as Block[]).filter((block) => block.type === 'input');
    expect(inputs[0]?.block_id).toBe('arg:s3:ticket_id');
    const focused = (v: typeof view) =>
      (v.blocks as Block[]).filter((block) => block.element?.focus_on_load === true).map((b) => b.block_id);
    expect(focused(view)).toEqual(['arg:s3:body']);
    // Without a field (or one the step lacks), the step's first input.
    const first = buildEditModal({
      run: runView(current),
      config: freightConfig,
      editorId: 'U0OP1',
      focusStepId: 's3',
    });
    expect(focused(first)).toEqual(['arg:s3:ticket_id']);
    expect(JSON.stringify(view.blocks)).toContain('Step `s3` is shown first');
    expect(JSON.parse(view.private_metadata ?? '{}')).toMatchObject({ f: 's3' });
  });
});
