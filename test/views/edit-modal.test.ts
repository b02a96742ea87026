import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RunView } from '../../src/approvals/types.ts';
import { checkView } from '../../src/emulator/block-kit-limits.ts';
import { stateValue } from '../../src/emulator/state-values.ts';
import {
  type Diagnostic,
  envelopeOf,
  formatMoney,
  moneyToDecimal,
  validate,
} from '../../src/pipeline/index.ts';
import { diagnosticsToModalErrors, editResultAck } from '../../views/edit-errors.ts';
import { parseEditMetadata } from '../../views/edit-layout.ts';
import { buildEditModal, editRefusalModal } from '../../views/edit-modal.ts';
import { readEditSubmission } from '../../views/edit-submission.ts';
import {
  freightConfig,
  freightEdit,
  freightV1,
  NOW,
  orderArgs,
  runView,
  shopConfig,
  shopRun,
  untouchedState,
} from './fixtures.ts';

type Block = {
  type: string;
  block_id?: string;
  element?: Record<string, unknown>;
  elements?: Record<string, unknown>[];
};
const blocksOf = (view: { blocks: readonly unknown[] }) => view.blocks as Block[];
const inputIds = (view: { blocks: readonly unknown[] }) =>
  blocksOf(view)
    .filter((block) => block.type === 'input')
    .map((block) => block.block_id);
const elementAt = (view: { blocks: readonly unknown[] }, blockId: string) =>
  blocksOf(view).find((block) => block.block_id === blockId)?.element;

/** The current steps as an edit submits them. */
const stepsOf = (run: RunView) => run.current.plan.steps.map(({ id, tool, args }) => ({ id, tool, args }));

describe('edit modal', () => {
  it('renders the freight plan with one typed, prefilled input per argument', () => {
    const view = buildEditModal({ run: runView(freightV1()), config: freightConfig, editorId: 'U0OP1' });
    expect(checkView(view)).toEqual([]);
    expect(view).toMatchInlineSnapshot(`
      {
        "blocks": [
          {
            "elements": [
              {
                "text": "Editing version 1 of run \`run-freight-1\`. Saving creates version 2: steps you add or change need approval again; steps you leave alone keep theirs.",
                "type": "mrkdwn",
              },
            ],
            "type": "context",
          },
          {
            "text": {
              "text": "*1. Add internal note* · \`s1\`",
              "type": "mrkdwn",
            },
            "type": "section",
          },
          {
            "block_id": "arg:s1:ticket_id",
            "element": {
              "action_id": "input",
              "initial_value": "74991",
              "multiline": false,
              "type": "plain_text_input",
            },
            "label": {
              "emoji": true,
              "text": "Ticket",
              "type": "plain_text",
            },
            "optional": false,
            "type": "input",
          },
          {
            "block_id": "arg:s1:note",
            "element": {
              "action_id": "input",
              "initial_value": "Customer reports the pallet delivery on 2 April was missed; driver logged no attempt.",
              "multiline": true,
              "type": "plain_text_input",
            },
            "hint": {
              "emoji": true,
              "text": "Up to 2,000 characters.",
              "type": "plain_text",
            },
            "label": {
              "emoji": true,
              "text": "Note",
              "type": "plain_text",
            },
            "optional": false,
            "type": "input",
          },
          {
            "block_id": "deps:s1",
            "element": {
              "action_id": "input",
              "options": [
                {
                  "text": {
                    "emoji": true,
                    "text": "2. Reschedule delivery (s2)",
                    "type": "plain_text",
                  },
                  "value": "s2",
                },
                {
                  "text": {
                    "emoji": true,
                    "text": "3. Reply to customer (s3)",
                    "type": "plain_text",
                  },
                  "value": "s3",
                },
              ],
              "placeholder": {
                "emoji": true,
                "text": "No other step",
                "type": "plain_text",
              },
              "type": "multi_static_select",
            },
            "hint": {
              "emoji": true,
              "text": "It runs only once each step picked here has been applied. Leave empty if it needs none.",
              "type": "plain_text",
            },
            "label": {
              "emoji": true,
              "text": "Step s1 runs after",
              "type": "plain_text",
            },
            "optional": true,
            "type": "input",
          },
          {
            "text": {
              "text": "*2. Reschedule delivery* · \`s2\`",
              "type": "mrkdwn",
            },
            "type": "section",
          },
          {
            "block_id": "arg:s2:delivery_id",
            "element": {
              "action_id": "input",
              "initial_value": "dl_55120",
              "multiline": false,
              "type": "plain_text_input",
            },
            "label": {
              "emoji": true,
              "text": "Delivery",
              "type": "plain_text",
            },
            "optional": false,
            "type": "input",
          },
          {
            "block_id": "arg:s2:window",
            "element": {
              "action_id": "input",
              "initial_date": "2026-04-03",
              "type": "datepicker",
            },
            "label": {
              "emoji": true,
              "text": "New delivery date",
              "type": "plain_text",
            },
            "optional": false,
            "type": "input",
          },
          {
            "block_id": "deps:s2",
            "element": {
              "action_id": "input",
              "options": [
                {
                  "text": {
                    "emoji": true,
                    "text": "1. Add internal note (s1)",
                    "type": "plain_text",
                  },
                  "value": "s1",
                },
                {
                  "text": {
                    "emoji": true,
                    "text": "3. Reply to customer (s3)",
                    "type": "plain_text",
                  },
                  "value": "s3",
                },
              ],
              "placeholder": {
                "emoji": true,
                "text": "No other step",
                "type": "plain_text",
              },
              "type": "multi_static_select",
            },
            "hint": {
              "emoji": true,
              "text": "It runs only once each step picked here has been applied. Leave empty if it needs none.",
              "type": "plain_text",
            },
            "label": {
              "emoji": true,
              "text": "Step s2 runs after",
              "type": "plain_text",
            },
            "optional": true,
            "type": "input",
          },
          {
            "text": {
              "text": "*3. Reply to customer* · \`s3\` · ⚠️ *Irreversible*",
              "type": "mrkdwn",
            },
            "type": "section",
          },
          {
            "block_id": "arg:s3:ticket_id",
            "element": {
              "action_id": "input",
              "initial_value": "74991",
              "multiline": false,
              "type": "plain_text_input",
            },
            "label": {
              "emoji": true,
              "text": "Ticket",
              "type": "plain_text",
            },
            "optional": false,
            "type": "input",
          },
          {
            "block_id": "arg:s3:body",
            "element": {
              "action_id": "input",
              "initial_value": "Hi Marta, sorry about the missed delivery. We have rebooked it for Friday 3 April, before noon.",
              "multiline": true,
              "type": "plain_text_input",
            },
            "hint": {
              "emoji": true,
              "text": "Up to 2,000 characters.",
              "type": "plain_text",
            },
            "label": {
              "emoji": true,
              "text": "Reply",
              "type": "plain_text",
            },
            "optional": false,
            "type": "input",
          },
          {
            "block_id": "deps:s3",
            "element": {
              "action_id": "input",
              "options": [
                {
                  "text": {
                    "emoji": true,
                    "text": "1. Add internal note (s1)",
                    "type": "plain_text",
                  },
                  "value": "s1",
                },
                {
                  "text": {
                    "emoji": true,
                    "text": "2. Reschedule delivery (s2)",
                    "type": "plain_text",
                  },
                  "value": "s2",
                },
              ],
              "placeholder": {
                "emoji": true,
                "text": "No other step",
                "type": "plain_text",
              },
              "type": "multi_static_select",
            },
            "hint": {
              "emoji": true,
              "text": "It runs only once each step picked here has been applied. Leave empty if it needs none.",
              "type": "plain_text",
            },
            "label": {
              "emoji": true,
              "text": "Step s3 runs after",
              "type": "plain_text",
            },
            "optional": true,
            "type": "input",
          },
          {
            "type": "divider",
          },
          {
            "block_id": "remove_steps",
            "element": {
              "action_id": "input",
              "options": [
                {
                  "text": {
                    "emoji": true,
                    "text": "1. Add internal note (s1)",
                    "type": "plain_text",
                  },
                  "value": "s1",
                },
                {
                  "text": {
                    "emoji": true,
                    "text": "2. Reschedule delivery (s2)",
                    "type": "plain_text",
                  },
                  "value": "s2",
                },
                {
                  "text": {
                    "emoji": true,
                    "text": "3. Reply to customer (s3)",
                    "type": "plain_text",
                  },
                  "value": "s3",
                },
              ],
              "type": "checkboxes",
            },
            "label": {
              "emoji": true,
              "text": "Remove steps",
              "type": "plain_text",
            },
            "optional": true,
            "type": "input",
          },
          {
            "block_id": "add_step",
            "elements": [
              {
                "action_id": "add_step",
                "options": [
                  {
                    "text": {
                      "emoji": true,
                      "text": "Reschedule delivery",
                      "type": "plain_text",
                    },
                    "value": "reschedule_delivery",
                  },
                  {
                    "text": {
                      "emoji": true,
                      "text": "Reply to customer",
                      "type": "plain_text",
                    },
                    "value": "send_reply",
                  },
                  {
                    "text": {
                      "emoji": true,
                      "text": "Add internal note",
                      "type": "plain_text",
                    },
                    "value": "add_note",
                  },
                ],
                "placeholder": {
                  "emoji": true,
                  "text": "Add a step…",
                  "type": "plain_text",
                },
                "type": "static_select",
              },
            ],
            "type": "actions",
          },
        ],
        "callback_id": "edit_plan",
        "close": {
          "emoji": true,
          "text": "Cancel",
          "type": "plain_text",
        },
        "private_metadata": "{"r":"run-freight-1","v":1}",
        "submit": {
          "emoji": true,
          "text": "Save as version 2",
          "type": "plain_text",
        },
        "title": {
          "emoji": true,
          "text": "Edit plan v1",
          "type": "plain_text",
        },
        "type": "modal",
      }
    `);
  });

  it('picks each element from the zod field (docs/architecture.md §9) and prefills it', () => {
    const run = shopRun([{ id: 's1', tool: 'update_order', args: orderArgs }]);
    const view = buildEditModal({ run, config: shopConfig, editorId: 'U0OP1' });
    expect(checkView(view)).toEqual([]);
    const summary = Object.fromEntries(
      blocksOf(view)
        .filter((block) => block.type === 'input')
        .map((block) => {
          const { type, action_id, options, ...initial } = block.element!;
          return [block.block_id, `${type} ${JSON.stringify(initial)}`];
        }),
    );
    expect(summary).toMatchInlineSnapshot(`
      {
        "arg:s1:address.city": "plain_text_input {"multiline":false,"initial_value":"Oslo"}",
        "arg:s1:address.postcode": "plain_text_input {"multiline":false,"initial_value":"0150"}",
        "arg:s1:contact": "email_text_input {"initial_value":"ops@example.com"}",
        "arg:s1:deliver_by": "datetimepicker {"initial_date_time":1775233800}",
        "arg:s1:fee": "plain_text_input {"initial_value":"500"}",
        "arg:s1:gift": "checkboxes {"initial_options":[{"text":{"type":"plain_text","text":"Yes","emoji":true},"value":"true"}]}",
        "arg:s1:insured": "checkboxes {}",
        "arg:s1:note": "plain_text_input {"multiline":true,"initial_value":"Leave at the back door.\\nRing twice."}",
        "arg:s1:order_id": "plain_text_input {"multiline":false,"initial_value":"ord_1001"}",
        "arg:s1:price": "plain_text_input {"initial_value":"19.99"}",
        "arg:s1:quantity": "plain_text_input {"initial_value":"3"}",
        "arg:s1:ship_on": "datepicker {"initial_date":"2026-04-02"}",
        "arg:s1:speed": "static_select {"placeholder":{"type":"plain_text","text":"Choose…","emoji":true},"initial_option":{"text":{"type":"plain_text","text":"express","emoji":true},"value":"express"}}",
        "arg:s1:tags.0": "plain_text_input {"multiline":false,"initial_value":"fragile"}",
        "arg:s1:tags.1": "plain_text_input {"multiline":false,"initial_value":"heavy"}",
        "arg:s1:tracking_url": "url_text_input {}",
        "remove_steps": "checkboxes {}",
      }
    `);
    // Values no single input can hold are shown and kept.
    const fixed = blocksOf(view)
      .filter((block) => block.type === 'context')
      .map((block) => block.elements![0]!.text);
    expect(fixed).toContain("*Reference:* 42 — _can't be edited here; it is kept as it is_");
  });

  it('offers only tools the editor may author in add_step', () => {
    const run = runView(freightV1());
    const offered = (editorId: string) => {
      const view = buildEditModal({ run, config: freightConfig, editorId });
      const select = blocksOf(view).find((block) => block.block_id === 'add_step')?.elements?.[0];
      return (select?.options as { value: string }[] | undefined)?.map((o) => o.value);
    };
    expect(offered('U0OP1')).toEqual(['reschedule_delivery', 'send_reply', 'add_note']);
    expect(offered('U0FIN1')).toEqual(['reschedule_delivery', 'issue_refund', 'send_reply', 'add_note']);
    expect(offered('U0NOBODY')).toBeUndefined();
  });

  it('adds the chosen tool as a new step with the id the service would give it, and remembers it', () => {
    const run = runView(freightV1());
    const first = buildEditModal({
      run,
      config: freightConfig,
      editorId: 'U0FIN1',
      addedTool: 'issue_refund',
    });
    expect(inputIds(first)).toContain('arg:s4:invoice_id');
    // Text, not number_input: what was typed ("$1,489", "1.489,00") reaches the parser, which says what is wrong.
    expect(elementAt(first, 'arg:s4:amount')).toEqual({ type: 'plain_text_input', action_id: 'input' });
    expect(first.private_metadata).toBe('{"r":"run-freight-1","v":1,"a":[["s4","issue_refund"]]}');

    const metadata = parseEditMetadata(first.private_metadata!);
    if (!metadata.ok) throw new Error(metadata.message);
    const second = buildEditModal({
      run,
      config: freightConfig,
      editorId: 'U0FIN1',
      ...metadata.metadata,
      addedTool: 'add_note',
    });
    expect(inputIds(second)).toEqual(
      expect.arrayContaining(['arg:s4:amount', 'arg:s5:ticket_id', 'arg:s5:note']),
    );
    expect(checkView(second)).toEqual([]);
  });

  it('tells the editor which steps their groups may not change', () => {
    const { current } = freightEdit();
    const view = buildEditModal({ run: runView(current), config: freightConfig, editorId: 'U0OP1' });
    const headings = blocksOf(view)
      .filter((block) => block.type === 'section')
      .map((block) => (block as unknown as { text: { text: string } }).text.text);
    expect(headings).toContain(
      '*4. Issue refund* · `s4` · ⚠️ *Irreversible*\n🔒 Your groups may not write Issue refund steps: changes to it will be refused, but you may remove it.',
    );
  });

  it('offers removal with checkboxes up to 10 steps and a multi-select beyond', () => {
    const steps = (count: number) =>
      Array.from({ length: count }, (_, i) => ({
        id: `s${i + 1}`,
        tool: 'wire_funds',
        args: { amount: 100, iban: 'X1' },
      }));
    const small = buildEditModal({ run: shopRun(steps(10)), config: shopConfig, editorId: 'U0LEAD1' });
    const large = buildEditModal({ run: shopRun(steps(11)), config: shopConfig, editorId: 'U0LEAD1' });
    expect(elementAt(small, 'remove_steps')).toMatchObject({ type: 'checkboxes', action_id: 'input' });
    expect(elementAt(large, 'remove_steps')).toMatchObject({
      type: 'multi_static_select',
      action_id: 'input',
    });
    expect(
      (elementAt(large, 'remove_steps')!.options as { value: string }[]).map((o) => o.value),
    ).toHaveLength(11);
    expect(checkView(small)).toEqual([]);
    expect(checkView(large)).toEqual([]);
  });

  it('shows the whole plan while it fits in 100 blocks, and a step picker from the first block over', () => {
    const wires = (count: number) =>
      shopRun(
        Array.from({ length: count }, (_, i) => ({
          id: `s${i + 1}`,
          tool: 'wire_funds',
          args: { amount: 1, iban: 'X1' },
        })),
      );
    // Each step: its heading, two fields and the steps it runs after; the form: 4 blocks more.
    const fits = buildEditModal({ run: wires(24), config: shopConfig, editorId: 'U0LEAD1' });
    expect(fits.blocks).toHaveLength(100);
    expect(checkView(fits)).toEqual([]);
    const over = buildEditModal({ run: wires(25), config: shopConfig, editorId: 'U0LEAD1' });
    expect(blocksOf(over).some((block) => block.block_id === 'pick_step')).toBe(true);
    expect(checkView(over)).toEqual([]);
  });

  it('edits a plan too large for one modal a step at a time, with the same block ids', () => {
    const steps = Array.from({ length: 8 }, (_, i) => ({
      id: `s${i + 1}`,
      tool: 'update_order',
      args: { ...orderArgs, order_id: `ord_${i + 1}` },
    }));
    const run = shopRun(steps);
    const picker = buildEditModal({ run, config: shopConfig, editorId: 'U0OP1' });
    expect(checkView(picker)).toEqual([]);
    expect(inputIds(picker)).toEqual(['remove_steps']);
    expect(blocksOf(picker).find((block) => block.block_id === 'pick_step')?.elements?.[0]).toMatchObject({
      type: 'static_select',
      action_id: 'pick_step',
    });

    const focused = buildEditModal({ run, config: shopConfig, editorId: 'U0OP1', focusStepId: 's3' });
    expect(checkView(focused)).toEqual([]);
    expect(inputIds(focused)).toContain('arg:s3:price');
    expect(inputIds(focused).filter((id) => id?.startsWith('arg:s2:'))).toEqual([]);
    expect(focused.private_metadata).toBe('{"r":"run-shop-1","v":1,"f":"s3"}');

    // Adding a step keeps the picked one in view (and in the metadata), beside the new one.
    const withAdded = buildEditModal({
      run,
      config: shopConfig,
      editorId: 'U0OP1',
      focusStepId: 's3',
      addedTool: 'update_order',
    });
    expect(checkView(withAdded)).toEqual([]);
    expect(inputIds(withAdded)).toEqual(expect.arrayContaining(['arg:s3:price', 'arg:s9:price']));
    expect(withAdded.private_metadata).toBe('{"r":"run-shop-1","v":1,"a":[["s9","update_order"]],"f":"s3"}');

    // Only the picked step is read; the others keep their arguments.
    const read = readEditSubmission({
      run,
      config: shopConfig,
      stateValues: untouchedState(focused, { 'arg:s3:price': stateValue.number('25.50') }),
      privateMetadata: focused.private_metadata!,
    });
    expect(read).toMatchObject({ ok: true });
    if (!read.ok) return;
    expect(read.steps.map((step) => step.args.price)).toEqual([
      1999, 1999, 2550, 1999, 1999, 1999, 1999, 1999,
    ]);
    expect(read.steps.filter((step) => step.id !== 's3')).toEqual(
      stepsOf(run).filter((step) => step.id !== 's3'),
    );
  });

  it('stays within Slack limits with ten added steps and long ids', () => {
    const run = shopRun(
      [{ id: `step-${'x'.repeat(58)}`, tool: 'update_order', args: orderArgs }],
      `run-${'r'.repeat(120)}`,
    );
    let view = buildEditModal({ run, config: shopConfig, editorId: 'U0LEAD1' });
    for (let i = 0; i < 12; i++) {
      const metadata = parseEditMetadata(view.private_metadata!);
      if (!metadata.ok) throw new Error(metadata.message);
      view = buildEditModal({
        run,
        config: shopConfig,
        editorId: 'U0LEAD1',
        ...metadata.metadata,
        addedTool: 'update_order',
      });
      expect(checkView(view)).toEqual([]);
    }
    const metadata = parseEditMetadata(view.private_metadata!);
    expect(metadata.ok && metadata.metadata.added.map((step) => step.id)).toEqual([
      's1',
      's2',
      's3',
      's4',
      's5',
      's6',
      's7',
      's8',
      's9',
      's10',
    ]);
    expect(blocksOf(view).some((block) => block.block_id === 'add_step')).toBe(false);
  });

  it('shows that the plan changed instead of a form for an old version, offering the current one', () => {
    const { current } = freightEdit();
    const view = editRefusalModal(
      { kind: 'stale', run: runView(current), currentVersion: 2 },
      { baseVersion: 1, now: NOW },
    );
    expect(checkView(view)).toEqual([]);
    expect(inputIds(view)).toEqual([]);
    expect(JSON.stringify(view.blocks)).toContain('You were editing version 1; version 2 is current now.');
    expect(blocksOf(view).at(-1)!.elements).toMatchObject([
      { type: 'button', action_id: 'edit', value: '{"r":"run-freight-1","v":2}' },
    ]);
  });

  it('says a decided plan can no longer be edited', () => {
    const run = runView(freightV1(), { status: 'approved', decidedBy: 'U0OP1', decidedAt: NOW });
    const view = editRefusalModal(
      { kind: 'already_decided', run, status: 'approved', by: 'U0OP1' },
      { baseVersion: 1, now: NOW },
    );
    expect(checkView(view)).toEqual([]);
    expect(JSON.stringify(view.blocks)).toContain('✅ *Approved* by <@U0OP1> at 10:00 UTC');
  });
});

describe('reading an edit submission', () => {
  const read = (run: RunView, view: ReturnType<typeof buildEditModal>, overrides = {}) =>
    readEditSubmission({
      run,
      config: run.agent === 'shop' ? shopConfig : freightConfig,
      stateValues: untouchedState(view, overrides),
      privateMetadata: view.private_metadata!,
    });

  it('gives back exactly the current steps when nothing was touched', () => {
    for (const run of [
      runView(freightV1()),
      runView(freightEdit().current),
      shopRun(
        [
          { id: 's1', tool: 'update_order', args: orderArgs },
          {
            id: 's2',
            tool: 'update_order',
            args: { ...orderArgs, note: undefined, gift: false, tracking_url: 'https://t.example/1' },
          },
          { id: 's3', tool: 'wire_funds', args: { amount: 1, iban: 'X' } },
        ].map((step) => ({ ...step, args: JSON.parse(JSON.stringify(step.args)) })),
      ),
    ]) {
      const view = buildEditModal({
        run,
        config: run.agent === 'shop' ? shopConfig : freightConfig,
        editorId: 'U0LEAD1',
      });
      expect(read(run, view)).toEqual({
        ok: true,
        runId: run.runId,
        baseVersion: run.version,
        steps: stepsOf(run),
        inputBlockIds: inputIds(view),
      });
    }
  });

  it('converts money typed as a decimal to minor units exactly, for any amount', () => {
    const base = shopRun([{ id: 's1', tool: 'update_order', args: orderArgs }]);
    fc.assert(
      fc.property(
        // From one cent: money() refuses zero unless the tool allows it (bounds are tested below).
        fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
        fc.integer({ min: 1, max: 1e12 }),
        (price, typed) => {
          const run = withArgs(base, { ...orderArgs, price });
          const view = buildEditModal({ run, config: shopConfig, editorId: 'U0OP1' });
          expect(elementAt(view, 'arg:s1:price')?.initial_value).toBe(moneyToDecimal(price, 'EUR'));
          // Untouched: the same minor units come back.
          const same = read(run, view);
          expect(same.ok && same.steps[0]!.args.price).toBe(price);
          // Typed as a decimal, or pasted as people write it: exact, never through a float.
          for (const text of [moneyToDecimal(typed, 'EUR'), formatMoney(typed, 'EUR')]) {
            const edited = read(run, view, { 'arg:s1:price': stateValue.number(text) });
            expect(edited.ok && edited.steps[0]!.args.price).toBe(typed);
          }
        },
      ),
    );
  });

  it('reads each element back into a typed value', () => {
    const run = shopRun([{ id: 's1', tool: 'update_order', args: orderArgs }]);
    const view = buildEditModal({ run, config: shopConfig, editorId: 'U0OP1' });
    const result = read(run, view, {
      'arg:s1:note': stateValue.plainText(null),
      'arg:s1:quantity': stateValue.number('12'),
      'arg:s1:fee': stateValue.number('1200'),
      'arg:s1:speed': stateValue.staticSelect({ text: 'standard', value: 'standard' }),
      'arg:s1:ship_on': stateValue.date('2026-04-06'),
      'arg:s1:deliver_by': stateValue.dateTime(1775462400),
      'arg:s1:gift': stateValue.checkboxes([]),
      'arg:s1:insured': stateValue.checkboxes([{ text: 'Yes', value: 'true' }]),
      'arg:s1:tracking_url': stateValue.url('https://t.example/9'),
      'arg:s1:address.postcode': stateValue.plainText(''),
    });
    expect(result.ok && result.steps[0]!.args).toEqual({
      order_id: 'ord_1001',
      quantity: 12,
      price: 1999,
      fee: 1200,
      speed: 'standard',
      ship_on: '2026-04-06',
      deliver_by: '2026-04-06T08:00:00Z',
      gift: false,
      insured: true,
      contact: 'ops@example.com',
      tracking_url: 'https://t.example/9',
      address: { city: 'Oslo' },
      tags: ['fragile', 'heavy'],
      reference: 42,
    });
  });

  it('keys field errors by block id', () => {
    const run = runView(freightV1());
    const view = buildEditModal({
      run,
      config: freightConfig,
      editorId: 'U0FIN1',
      addedTool: 'issue_refund',
    });
    expect(
      read(run, view, {
        'arg:s2:window': stateValue.date(null),
        'arg:s4:invoice_id': stateValue.plainText('in_74121'),
        'arg:s4:amount': stateValue.number('12.345'),
      }),
    ).toEqual({
      ok: false,
      reason: 'fields',
      errors: {
        'arg:s2:window': 'This field is required.',
        'arg:s4:amount': 'USD amounts have at most 2 decimal places (write it like 1489.00)',
      },
    });
    const shop = shopRun([{ id: 's1', tool: 'update_order', args: orderArgs }]);
    const shopView = buildEditModal({ run: shop, config: shopConfig, editorId: 'U0OP1' });
    expect(read(shop, shopView, { 'arg:s1:quantity': stateValue.number('2.5') })).toMatchObject({
      errors: { 'arg:s1:quantity': 'Enter a whole number, like 12.' },
    });
  });

  it('refuses an amount outside the field’s bounds at the field, in the currency', () => {
    const run = runView(freightV1());
    const view = buildEditModal({
      run,
      config: freightConfig,
      editorId: 'U0FIN1',
      addedTool: 'issue_refund',
    });
    const typed = (amount: string) =>
      read(run, view, {
        'arg:s4:invoice_id': stateValue.plainText('in_74119'),
        'arg:s4:amount': stateValue.number(amount),
      });
    expect(typed('0')).toEqual({
      ok: false,
      reason: 'fields',
      errors: { 'arg:s4:amount': 'Enter an amount of at least $0.01 (you entered $0.00).' },
    });
    expect(typed('-5')).toMatchObject({
      errors: { 'arg:s4:amount': 'Enter an amount of at least $0.01 (you entered -$5.00).' },
    });
    expect(typed('0.01')).toMatchObject({ ok: true });

    const shop = shopRun([{ id: 's1', tool: 'wire_funds', args: { amount: 100, iban: 'X1' } }]);
    const shopView = buildEditModal({ run: shop, config: shopConfig, editorId: 'U0LEAD1' });
    expect(read(shop, shopView, { 'arg:s1:amount': stateValue.number('10000.01') })).toMatchObject({
      errors: { 'arg:s1:amount': 'Enter an amount of at most $10,000.00 (you entered $10,000.01).' },
    });
    expect(read(shop, shopView, { 'arg:s1:amount': stateValue.number('10000') })).toMatchObject({ ok: true });
  });

  it('says a money field’s bounds in its hint, in the currency', () => {
    const hintAt = (view: { blocks: readonly unknown[] }, blockId: string) =>
      (blocksOf(view).find((block) => block.block_id === blockId) as { hint?: { text: string } } | undefined)
        ?.hint?.text;
    const refund = buildEditModal({
      run: runView(freightV1()),
      config: freightConfig,
      editorId: 'U0FIN1',
      addedTool: 'issue_refund',
    });
    expect(hintAt(refund, 'arg:s4:amount')).toBe(
      'A decimal amount of at least $0.01, e.g. 1489.00 or $1,489.00',
    );
    const shop = shopRun([{ id: 's1', tool: 'wire_funds', args: { amount: 100, iban: 'X1' } }]);
    const wire = buildEditModal({ run: shop, config: shopConfig, editorId: 'U0LEAD1' });
    expect(hintAt(wire, 'arg:s1:amount')).toBe(
      'A decimal amount from $0.01 to $10,000.00, e.g. 1489.00 or $1,489.00',
    );
  });

  it('drops removed steps and appends added ones with their ids', () => {
    const run = runView(freightV1());
    const view = buildEditModal({
      run,
      config: freightConfig,
      editorId: 'U0FIN1',
      addedTool: 'issue_refund',
    });
    const result = read(run, view, {
      remove_steps: stateValue.checkboxes([{ text: '3. Reply to customer (s3)', value: 's3' }]),
      'arg:s4:invoice_id': stateValue.plainText('in_74119'),
      'arg:s4:amount': stateValue.number('1489.00'),
    });
    expect(result).toEqual({
      ok: true,
      runId: 'run-freight-1',
      baseVersion: 1,
      steps: [
        ...stepsOf(run).filter((step) => step.id !== 's3'),
        { id: 's4', tool: 'issue_refund', args: { invoice_id: 'in_74119', amount: 148_900 } },
      ],
      inputBlockIds: inputIds(view),
    });
  });

  it('reads nothing from a modal for another version than the run it is given (the guard answers first)', () => {
    const { previous, current } = freightEdit();
    const view = buildEditModal({ run: runView(previous), config: freightConfig, editorId: 'U0OP1' });
    expect(read(runView(current), view)).toMatchObject({ ok: false, reason: 'fields' });
  });

  it('refuses metadata it did not write', () => {
    const run = runView(freightV1());
    const result = readEditSubmission({
      run,
      config: freightConfig,
      stateValues: {},
      privateMetadata: '{"r":"x"}',
    });
    expect(result).toMatchObject({
      ok: false,
      reason: 'fields',
      errors: { remove_steps: expect.any(String) },
    });
  });
});

describe('pipeline diagnostics in the modal', () => {
  const diagnostic = (where: Partial<Diagnostic>, message = 'problem'): Diagnostic => ({
    phase: 'authorize',
    code: 'check_failed',
    message,
    ...where,
  });
  const shown = [
    'arg:s1:ticket_id',
    'arg:s1:note',
    'arg:s4:invoice_id',
    'arg:s4:amount',
    'arg:s9:address.city',
    'remove_steps',
  ];

  it('puts each diagnostic at its field, its step, or the plan', () => {
    expect(
      diagnosticsToModalErrors(
        [
          diagnostic({ stepId: 's4', path: ['amount'] }, 'refund exceeds the invoice balance'),
          diagnostic(
            { stepId: 's4', code: 'may_author' },
            'step s4: your groups may not write issue_refund steps',
          ),
          diagnostic({ stepId: 's9', path: ['address', 'city'] }, 'unknown city'),
          diagnostic({ stepId: 's1', path: ['note', 0] }, 'deeper than shown'),
          diagnostic({ stepId: 's7' }, 'step not shown'),
          diagnostic({ phase: 'parse', code: 'no_steps' }, 'a plan needs at least one step'),
        ],
        shown,
      ),
    ).toEqual({
      'arg:s4:amount': 'refund exceeds the invoice balance',
      'arg:s4:invoice_id': 'step s4: your groups may not write issue_refund steps',
      'arg:s9:address.city': 'unknown city',
      'arg:s1:note': 'deeper than shown',
      remove_steps: 'step not shown · a plan needs at least one step',
    });
  });

  it('answers an operator’s edit adding a refund with the may_author error at the added step', async () => {
    const run = runView(freightV1());
    const view = buildEditModal({ run, config: freightConfig, editorId: 'U0OP1', addedTool: 'issue_refund' });
    const privateMetadata = view.private_metadata!;
    const read = readEditSubmission({
      run,
      config: freightConfig,
      privateMetadata,
      stateValues: untouchedState(view, {
        'arg:s4:invoice_id': stateValue.plainText('in_74121'),
        'arg:s4:amount': stateValue.number('45'),
      }),
    });
    if (!read.ok) throw new Error(JSON.stringify(read));
    const base = run.current.plan;
    const validated = await validate(
      { ...envelopeOf(base), steps: read.steps },
      { config: freightConfig.pipeline, now: NOW, edit: { editorId: 'U0OP1', base } },
    );
    if (validated.ok) throw new Error('expected may_author');
    const context = { inputBlockIds: read.inputBlockIds, baseVersion: 1, now: NOW };
    expect(
      editResultAck({ kind: 'invalid', phase: validated.phase, diagnostics: validated.diagnostics }, context),
    ).toEqual({
      response_action: 'errors',
      errors: {
        'arg:s4:invoice_id':
          'step s4: your groups (operators) may not write issue_refund steps; approving one and writing one are separate rights',
      },
    });
  });

  it('puts an amount refused by validation at its field, in dollars', async () => {
    // As if the modal's own check were bypassed (an older form): validation words it in dollars too.
    const run = runView(freightV1());
    const view = buildEditModal({
      run,
      config: freightConfig,
      editorId: 'U0FIN1',
      addedTool: 'issue_refund',
    });
    const base = run.current.plan;
    const refund = { id: 's4', tool: 'issue_refund', args: { invoice_id: 'in_74119', amount: -500 } };
    const validated = await validate(
      { ...envelopeOf(base), steps: [...stepsOf(run), refund] },
      { config: freightConfig.pipeline, now: NOW, edit: { editorId: 'U0FIN1', base } },
    );
    if (validated.ok) throw new Error('expected the negative refund to be refused');
    const context = {
      inputBlockIds: inputIds(view).flatMap((id) => (id === undefined ? [] : [id])),
      baseVersion: 1,
      now: NOW,
    };
    expect(
      editResultAck({ kind: 'invalid', phase: validated.phase, diagnostics: validated.diagnostics }, context),
    ).toEqual({
      response_action: 'errors',
      // At the field, in the person's terms: no "step s4: amount".
      errors: { 'arg:s4:amount': 'Must be at least $0.01, got -$5.00.' },
    });
  });

  it('answers every other outcome of an edit', () => {
    const { previous, current, diff } = freightEdit();
    const context = { inputBlockIds: ['remove_steps'], baseVersion: 1, now: NOW };
    expect(editResultAck({ kind: 'edited', run: runView(current), previous, diff }, context)).toEqual({
      response_action: 'clear',
    });
    const stale = editResultAck({ kind: 'stale', run: runView(current), currentVersion: 2 }, context);
    expect(stale.response_action === 'update' && stale.view.title.text).toBe('The plan changed');
    const refused = editResultAck(
      { kind: 'unauthorized', reason: 'you are in no group that may edit plans', run: runView(previous) },
      context,
    );
    expect(refused.response_action === 'update' && JSON.stringify(refused.view.blocks)).toContain(
      "🚫 *You can't edit this plan:* you are in no group that may edit plans.",
    );
    const unknown = editResultAck({ kind: 'not_found', runId: 'run-freight-1' }, context);
    expect(unknown.response_action === 'update' && JSON.stringify(unknown.view.blocks)).toContain(
      "I can't find run `run-freight-1`.",
    );
    for (const ack of [stale, refused, unknown])
      if (ack.response_action === 'update') expect(checkView(ack.view)).toEqual([]);
  });
});

/** The run with its first step's args replaced (the modal does not re-validate; amounts may exceed checks). */
function withArgs(run: RunView, args: Record<string, unknown>): RunView {
  const [first, ...rest] = run.current.plan.steps;
  const plan = { ...run.current.plan, steps: [{ ...first!, args: args as never }, ...rest] };
  return { ...run, current: { ...run.current, plan } };
}

describe('someone who may not edit at all', () => {
  it('gets the guard’s explanation instead of a form they could never submit', () => {
    const view = editRefusalModal(
      {
        kind: 'unauthorized',
        reason: 'you are in no group that may edit plans',
        run: runView(freightV1()),
      },
      { baseVersion: 1, now: NOW },
    );
    expect(view.submit).toBeUndefined();
    expect(checkView(view)).toEqual([]);
    expect(JSON.stringify(view.blocks)).toContain(
      "You can't edit this plan:* you are in no group that may edit plans",
    );
    expect(
      blocksOf(view).some((block) => typeof block.block_id === 'string' && block.block_id.startsWith('arg:')),
    ).toBe(false);
  });
});
