import { describe, expect, it } from 'vitest';
import { BLOCK_KIT_LIMITS, type BlockKitRule, checkMessageBlocks, checkView } from './block-kit-limits.ts';

const plain = (text: string) => ({ type: 'plain_text', text });
const section = (text: string, blockId?: string) => ({
  type: 'section',
  ...(blockId === undefined ? {} : { block_id: blockId }),
  text: { type: 'mrkdwn', text },
});
const button = (actionId: string, text = 'Approve', value = 'run-1|v1') => ({
  type: 'button',
  action_id: actionId,
  text: plain(text),
  value,
});
const option = (text: string, value: string) => ({ text: plain(text), value });
const options = (count: number) => Array.from({ length: count }, (_, i) => option(`Option ${i}`, `o${i}`));
const x = (length: number) => 'x'.repeat(length);

/** The rules (and pointers) violated, in a form that reads well in a failing test. */
const rulesOf = (violations: readonly { rule: BlockKitRule; pointer: string }[]) =>
  violations.map((violation) => `${violation.rule} ${violation.pointer}`);

describe('checkMessageBlocks', () => {
  it('accepts a realistic approval card', () => {
    const card = [
      { type: 'header', text: plain('warehouse wants to run 3 steps') },
      section('*1. Issue refund* — 1,489.00 USD to in_74119', 'step:s1'),
      { type: 'section', block_id: 'step:s2', fields: [plain('Route'), plain('review by finance')] },
      { type: 'context', elements: [{ type: 'mrkdwn', text: 'run r-1 · v1 · digest 9f86d081' }] },
      {
        type: 'actions',
        block_id: 'decide',
        elements: [button('approve'), button('reject', 'Reject'), button('edit', 'Edit')],
      },
    ];
    expect(checkMessageBlocks(card)).toEqual([]);
  });

  it(`allows ${BLOCK_KIT_LIMITS.messageBlocks} blocks and refuses one more, in Slack's words`, () => {
    const blocks = (count: number) => Array.from({ length: count }, () => ({ type: 'divider' }));
    expect(checkMessageBlocks(blocks(50))).toEqual([]);
    expect(checkMessageBlocks(blocks(51))).toEqual([
      {
        rule: 'messageBlocks',
        pointer: '/blocks',
        message: 'must be less than 51 items [json-pointer:/blocks]',
      },
    ]);
  });

  it.each([
    ['section text', (n: number) => [section(x(n))], 3000, 'sectionText /blocks/0/text/text'],
    [
      'header text',
      (n: number) => [{ type: 'header', text: plain(x(n)) }],
      150,
      'headerText /blocks/0/text/text',
    ],
    [
      'section field',
      (n: number) => [{ type: 'section', fields: [plain(x(n))] }],
      2000,
      'sectionFieldText /blocks/0/fields/0/text',
    ],
    [
      'button text',
      (n: number) => [{ type: 'actions', elements: [button('a', x(n))] }],
      75,
      'buttonText /blocks/0/elements/0/text/text',
    ],
    [
      'button value',
      (n: number) => [{ type: 'actions', elements: [button('a', 'Go', x(n))] }],
      2000,
      'buttonValue /blocks/0/elements/0/value',
    ],
    ['block_id', (n: number) => [section('hi', x(n))], 255, 'blockId /blocks/0/block_id'],
    [
      'action_id',
      (n: number) => [{ type: 'actions', elements: [button(x(n))] }],
      255,
      'actionId /blocks/0/elements/0/action_id',
    ],
    [
      'option text',
      (n: number) => [
        {
          type: 'actions',
          elements: [{ type: 'static_select', action_id: 's', options: [option(x(n), 'v')] }],
        },
      ],
      75,
      'optionText /blocks/0/elements/0/options/0/text/text',
    ],
    [
      'option value',
      (n: number) => [
        {
          type: 'actions',
          elements: [{ type: 'static_select', action_id: 's', options: [option('t', x(n))] }],
        },
      ],
      150,
      'optionValue /blocks/0/elements/0/options/0/value',
    ],
  ])('limits %s to %i characters', (_name, build, max, violated) => {
    expect(checkMessageBlocks(build(max))).toEqual([]);
    expect(rulesOf(checkMessageBlocks(build(max + 1)))).toEqual([violated]);
    expect(checkMessageBlocks(build(max + 1))[0]?.message).toMatch(`must be less than ${max + 1} characters`);
  });

  it.each([
    ['static_select', 100],
    ['multi_static_select', 100],
    ['checkboxes', 10],
    ['radio_buttons', 10],
    ['overflow', 5],
  ])('limits %s to %i options', (type, max) => {
    const block = (count: number) => [
      { type: 'actions', elements: [{ type, action_id: 'pick', options: options(count) }] },
    ];
    expect(checkMessageBlocks(block(max))).toEqual([]);
    expect(checkMessageBlocks(block(max + 1))).toMatchObject([
      {
        pointer: '/blocks/0/elements/0/options',
        message: expect.stringContaining(`must be less than ${max + 1} items`),
      },
    ]);
  });

  it('refuses duplicate block_ids in one message', () => {
    expect(rulesOf(checkMessageBlocks([section('a', 'step:s1'), section('b', 'step:s1')]))).toEqual([
      'duplicateBlockId /blocks/1/block_id',
    ]);
  });

  it('refuses duplicate action_ids within one block, but not across blocks', () => {
    const actions = (...ids: string[]) => ({ type: 'actions', elements: ids.map((id) => button(id)) });
    expect(rulesOf(checkMessageBlocks([actions('approve', 'approve')]))).toEqual([
      'duplicateActionId /blocks/0/elements/1/action_id',
    ]);
    expect(checkMessageBlocks([actions('approve'), actions('approve')])).toEqual([]);
  });

  it('refuses what Slack cannot render: unknown types, mrkdwn headers, empty sections and text', () => {
    expect(
      rulesOf(
        checkMessageBlocks([
          { type: 'sectoin', text: plain('typo') },
          { type: 'header', text: { type: 'mrkdwn', text: '*bold*' } },
          { type: 'section' },
          section(''),
        ]),
      ),
    ).toEqual([
      'unknownType /blocks/0/type',
      'wrongType /blocks/1/text/type',
      'sectionEmpty /blocks/2',
      'emptyText /blocks/3/text/text',
    ]);
  });

  it('says blocks must be an array', () => {
    expect(rulesOf(checkMessageBlocks({ type: 'divider' }))).toEqual(['wrongType /blocks']);
  });
});

describe('checkView', () => {
  const modal = (overrides: Record<string, unknown> = {}) => ({
    type: 'modal',
    callback_id: 'edit_plan',
    title: plain('Edit plan'),
    submit: plain('Submit edit'),
    close: plain('Cancel'),
    private_metadata: '{"run":"r-1","base":1}',
    blocks: [
      {
        type: 'input',
        block_id: 'arg:s4:amount',
        label: plain('Amount'),
        element: { type: 'number_input', action_id: 'input', is_decimal_allowed: true },
      },
    ],
    ...overrides,
  });

  it('accepts a realistic edit modal', () => {
    expect(checkView(modal())).toEqual([]);
  });

  it.each([
    ['title', 'viewTitle /view/title/text'],
    ['submit', 'viewSubmit /view/submit/text'],
    ['close', 'viewClose /view/close/text'],
  ])('limits the modal %s to 24 characters', (field, violated) => {
    expect(checkView(modal({ [field]: plain(x(24)) }))).toEqual([]);
    const violations = checkView(modal({ [field]: plain(x(25)) }));
    expect(rulesOf(violations)).toEqual([violated]);
    expect(violations[0]?.message).toBe(
      `must be less than 25 characters [json-pointer:${violated.split(' ')[1]}]`,
    );
  });

  it('limits private_metadata to 3000 characters', () => {
    expect(checkView(modal({ private_metadata: x(3000) }))).toEqual([]);
    expect(rulesOf(checkView(modal({ private_metadata: x(3001) })))).toEqual([
      'privateMetadata /view/private_metadata',
    ]);
  });

  it('allows 100 blocks in a modal or Home tab, not 101', () => {
    const blocks = (count: number) => Array.from({ length: count }, (_, i) => section(`step ${i}`, `b${i}`));
    expect(checkView(modal({ blocks: blocks(100) }))).toEqual([]);
    expect(rulesOf(checkView(modal({ blocks: blocks(101) })))).toEqual(['viewBlocks /view/blocks']);
    expect(rulesOf(checkView({ type: 'home', blocks: blocks(101) }))).toEqual(['viewBlocks /view/blocks']);
  });

  it('refuses duplicate block_ids in a view', () => {
    expect(rulesOf(checkView(modal({ blocks: [section('a', 'x'), section('b', 'x')] })))).toEqual([
      'duplicateBlockId /view/blocks/1/block_id',
    ]);
  });

  it('requires a title on modals, and a submit button when there are inputs', () => {
    expect(rulesOf(checkView(modal({ title: undefined, submit: undefined })))).toEqual([
      'requiredField /view/title',
      'submitRequired /view/submit',
    ]);
  });

  it('needs no title on a Home tab', () => {
    expect(checkView({ type: 'home', blocks: [section('Pending plans: 2')] })).toEqual([]);
  });

  it('refuses a view that is neither modal nor home', () => {
    expect(rulesOf(checkView({ type: 'workflow_step', blocks: [] }))).toEqual(['wrongType /view/type']);
  });
});
