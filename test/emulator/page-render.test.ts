import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { BlockActionInput } from '../../src/emulator/interactions.ts';
import type { ConfirmDialog } from '../../src/emulator/page/client/controls.ts';
import { type RenderOptions, renderBlocks } from '../../src/emulator/page/client/render-blocks.ts';
import { renderText } from '../../src/emulator/page/client/render-text.ts';
import type { Block } from '../../src/emulator/slack-objects.ts';
import { inputValues, stateValue } from '../../src/emulator/state-values.ts';
import { escapeMrkdwn } from '../../views/mrkdwn.ts';
import { FakeElement, fakeDocument } from '../helpers/fake-dom.ts';

const names = {
  user: (id: string) => ({ U0OP1: 'Dana Ortiz', U0FIN1: 'Sam Lindqvist' })[id],
  channel: (id: string) => (id === 'C0OPS' ? 'ops-approvals' : undefined),
};

function setup(overrides: Partial<RenderOptions> = {}) {
  const actions: BlockActionInput[] = [];
  const confirms: ConfirmDialog[] = [];
  const options: RenderOptions = {
    doc: fakeDocument,
    names,
    onAction: (action) => actions.push(action),
    confirm: async (dialog) => {
      confirms.push(dialog);
      return true;
    },
    idPrefix: 't',
    ...overrides,
  };
  return { actions, confirms, options };
}

function render(blocks: readonly Block[], overrides: Partial<RenderOptions> = {}) {
  const { actions, confirms, options } = setup(overrides);
  const rendered = renderBlocks(blocks, options);
  if (!(rendered.element instanceof FakeElement)) throw new Error('expected a fake element');
  return { ...rendered, root: rendered.element, actions, confirms };
}

const mrkdwn = (text: string) => ({ type: 'mrkdwn', text });
const plain = (text: string) => ({ type: 'plain_text', text, emoji: true });

describe('the page renders Block Kit safely', () => {
  it('shows hostile plan text, escaped by views/, as text: no element, mention or link comes out of it', () => {
    const hostile =
      '<script>alert(1)</script><img src=x onerror=alert(2)> <!channel> <@U0FIN1> <https://evil.example|bank> *x*';
    const { root } = render([
      { type: 'header', text: plain(hostile) },
      {
        type: 'section',
        text: mrkdwn(`Note: ${escapeMrkdwn(hostile)}`),
        fields: [mrkdwn(escapeMrkdwn(hostile))],
      },
      { type: 'context', elements: [mrkdwn(escapeMrkdwn(hostile))] },
    ]);
    expect(root.textContent).toContain('<script>alert(1)</script><img src=x onerror=alert(2)>');
    expect(root.findAll('script')).toEqual([]);
    expect(root.findAll('img')).toEqual([]);
    expect(root.findAll('.mention')).toEqual([]);
    expect(root.findAll('.link')).toEqual([]);
    // *x* in plan text is shown as typed: views/ keeps its marks from pairing, as Slack reads them.
    expect(root.findAll('b')).toEqual([]);
    expect(root.textContent?.replaceAll('\u200B', '')).toContain('*x*');
    // A plain_text header is not parsed at all: even an escaped-looking entity stays as typed.
    const header = render([{ type: 'header', text: plain('&lt;b&gt;') }]).root;
    expect(header.textContent).toBe('&lt;b&gt;');
  });

  it('formats the app’s mrkdwn: bold, italic, code, quotes, mentions by name, links as text with the URL as title', () => {
    const { root } = render([
      {
        type: 'section',
        text: mrkdwn(
          '*Approved* by <@U0OP1> in <#C0OPS> _just now_ `s2`\n>quoted\nsee <https://example.com/t/74991|ticket 74991> <!here>',
        ),
      },
    ]);
    expect(root.find('b').textContent).toBe('Approved');
    expect(root.find('i').textContent).toBe('just now');
    expect(root.find('code').textContent).toBe('s2');
    expect(root.find('blockquote').textContent).toBe('quoted');
    expect(root.findAll('.mention').map((m) => m.textContent)).toEqual([
      '@Dana Ortiz',
      '#ops-approvals',
      '@here',
    ]);
    const link = root.find('.link');
    expect(link.tagName).toBe('span');
    expect(link.textContent).toBe('ticket 74991');
    expect(link.title).toBe('https://example.com/t/74991');
    expect(root.findAll('a')).toEqual([]);
  });

  it('lays out header, section with fields and accessory, divider, context, actions, and says what it cannot show', () => {
    const { root } = render([
      { type: 'header', block_id: 'h', text: plain('📋 freight-ops plan') },
      {
        type: 'section',
        block_id: 'step:s4',
        text: mrkdwn('*4. Issue refund*'),
        fields: [mrkdwn('*Amount*'), mrkdwn('$1,489.00')],
        accessory: { type: 'button', action_id: 'remove_step', text: plain('Remove step s4'), value: 'v' },
      },
      { type: 'divider' },
      {
        type: 'context',
        elements: [mrkdwn('Run `r1`'), { type: 'image', image_url: 'https://x/y.png', alt_text: 'logo' }],
      },
      { type: 'image', image_url: 'https://x/chart.png', alt_text: 'a chart' },
      { type: 'video', title: plain('v') },
    ]);
    expect(root.children.map((block) => (block as FakeElement).getAttribute('data-block-type'))).toEqual([
      'header',
      'section',
      'divider',
      'context',
      'image',
      'video',
    ]);
    expect(root.find('[data-block-id="step:s4"]').find('.fields').textContent).toBe('Amount$1,489.00');
    expect(root.find('.accessory').find('button').textContent).toBe('Remove step s4');
    expect(root.find('.context').textContent).toBe('Run r1[image: logo]');
    expect(root.find('.image').textContent).toBe('[image: a chart]');
    expect(root.find('.unsupported').textContent).toBe('[unsupported block: video]');
    expect(root.findAll('img')).toEqual([]);
  });

  it('reports button clicks with the button’s ids, value and style, after its confirm dialog when it has one', async () => {
    const { root, actions, confirms } = render([
      {
        type: 'actions',
        block_id: 'decide',
        elements: [
          { type: 'button', action_id: 'approve', text: plain('Approve'), value: 'r1|1', style: 'primary' },
          {
            type: 'button',
            action_id: 'reject',
            text: plain('Reject'),
            value: 'r1|1',
            style: 'danger',
            confirm: {
              title: plain('Sure?'),
              text: plain('Nothing runs.'),
              confirm: plain('Reject'),
              deny: plain('Keep'),
            },
          },
        ],
      },
    ]);
    root.find('[data-action-id="approve"]').dispatch('click');
    root.find('[data-action-id="reject"]').dispatch('click');
    await Promise.resolve();
    await Promise.resolve();
    expect(confirms).toEqual([{ title: 'Sure?', text: 'Nothing runs.', confirm: 'Reject', deny: 'Keep' }]);
    expect(actions).toEqual([
      {
        type: 'button',
        actionId: 'approve',
        blockId: 'decide',
        text: 'Approve',
        value: 'r1|1',
        style: 'primary',
      },
      {
        type: 'button',
        actionId: 'reject',
        blockId: 'decide',
        text: 'Reject',
        value: 'r1|1',
        style: 'danger',
      },
    ]);
  });

  it('reads every input back in the exact shapes of view.state.values (slack-protocol/state_values.json)', () => {
    const yes = { text: plain('Yes'), value: 'true' };
    const express = { text: plain('Express'), value: 'express' };
    const { readState, root } = render([
      input('note', { type: 'plain_text_input', action_id: 'input', multiline: true, initial_value: 'Hi' }),
      input('empty', { type: 'plain_text_input', action_id: 'input' }),
      input('amount', {
        type: 'number_input',
        action_id: 'input',
        is_decimal_allowed: true,
        initial_value: '1489.00',
      }),
      input('email', { type: 'email_text_input', action_id: 'input', initial_value: 'ops@example.com' }),
      input('url', {
        type: 'url_text_input',
        action_id: 'input',
        initial_value: 'https://example.com/t/74991',
      }),
      input('day', { type: 'datepicker', action_id: 'input', initial_date: '2026-04-06' }),
      input('time', { type: 'timepicker', action_id: 'input', initial_time: '14:30' }),
      input('at', { type: 'datetimepicker', action_id: 'input', initial_date_time: 1775462400 }),
      input('speed', {
        type: 'static_select',
        action_id: 'input',
        options: [express],
        initial_option: express,
      }),
      input('flag', { type: 'checkboxes', action_id: 'input', options: [yes], initial_options: [yes] }),
      input('steps', { type: 'multi_static_select', action_id: 'input', options: [express] }),
    ]);
    expect(root.find('textarea').value).toBe('Hi');
    expect(readState()).toEqual(
      inputValues({
        note: stateValue.plainText('Hi'),
        empty: stateValue.plainText(null),
        amount: stateValue.number('1489.00'),
        email: stateValue.email('ops@example.com'),
        url: stateValue.url('https://example.com/t/74991'),
        day: stateValue.date('2026-04-06'),
        time: stateValue.time('14:30'),
        at: stateValue.dateTime(1775462400),
        speed: stateValue.staticSelect({ text: 'Express', value: 'express' }),
        flag: { type: 'checkboxes', selected_options: [yes] },
        steps: stateValue.multiStaticSelect([]),
      }),
    );
  });

  it('prefills from the view’s state values over initial values, and shows the app’s error under its block', () => {
    const { root, readState } = render(
      [
        input('arg:s2:window', { type: 'datepicker', action_id: 'input', initial_date: '2026-04-03' }),
        input('arg:s4:amount', { type: 'number_input', action_id: 'input', is_decimal_allowed: true }),
      ],
      {
        values: inputValues({ 'arg:s2:window': stateValue.date('2026-04-06') }),
        errors: { 'arg:s4:amount': 'Your groups may not write Issue refund steps.' },
      },
    );
    expect(readState()['arg:s2:window']).toEqual({ input: stateValue.date('2026-04-06') });
    const amount = root.find('[data-block-id="arg:s4:amount"]');
    expect(amount.className).toContain('has-error');
    expect(amount.find('[role="alert"]').textContent).toBe('Your groups may not write Issue refund steps.');
    expect(root.find('[data-block-id="arg:s2:window"]').findAll('[role="alert"]')).toEqual([]);
  });

  it('says which required inputs are empty, and leaves optional ones alone', () => {
    const { missingRequired } = render([
      input('arg:s4:invoice_id', { type: 'plain_text_input', action_id: 'input' }),
      { ...input('remove_steps', { type: 'checkboxes', action_id: 'input', options: [] }), optional: true },
    ]);
    expect(missingRequired()).toEqual({ 'arg:s4:invoice_id': 'Please complete this required field.' });
  });

  it('dispatches selections in actions blocks (add_step) but not plain input changes', () => {
    const refund = { text: plain('Issue refund'), value: 'issue_refund' };
    const { root, actions } = render([
      input('arg:s2:window', { type: 'datepicker', action_id: 'input', initial_date: '2026-04-03' }),
      {
        type: 'actions',
        block_id: 'add_step',
        elements: [
          {
            type: 'static_select',
            action_id: 'add_step',
            placeholder: plain('Add a step…'),
            options: [refund],
          },
        ],
      },
    ]);
    const date = root.find('[data-block-id="arg:s2:window"]').find('input');
    date.value = '2026-04-06';
    date.dispatch('change');
    const select = root.find('[data-action-id="add_step"]');
    select.value = 'issue_refund';
    select.dispatch('change');
    expect(actions).toEqual([
      {
        type: 'static_select',
        actionId: 'add_step',
        blockId: 'add_step',
        selectedOption: { text: 'Issue refund', value: 'issue_refund' },
        placeholder: 'Add a step…',
      },
    ]);
  });

  it('renders a text object that is not one as nothing', () => {
    const element = renderText(fakeDocument, { type: 'html', text: '<b>x</b>' }, names);
    expect(element.textContent).toBe('');
  });
});

describe('the page’s browser code', () => {
  const dir = new URL('../../src/emulator/page/client/', import.meta.url);
  const sources = readdirSync(dir)
    .filter((name) => name.endsWith('.ts'))
    .map((name) => ({ name, source: readFileSync(new URL(name, dir), 'utf8') }));

  it('never parses markup: no innerHTML, outerHTML, insertAdjacentHTML, document.write or eval', () => {
    for (const { name, source } of sources) {
      const code = source.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
      expect(code, name).not.toMatch(
        /innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function/,
      );
    }
  });

  it('imports values only from its own folder (the server serves nothing else); types may come from anywhere', () => {
    for (const { name, source } of sources) {
      const valueImports = [...source.matchAll(/^import (?!type )[^;]*? from '([^']+)';/gms)].map(
        (m) => m[1],
      );
      for (const path of valueImports) expect(path, name).toMatch(/^\.\/[a-z0-9-]+\.ts$/);
    }
  });
});

function input(blockId: string, element: Block): Block {
  return { type: 'input', block_id: blockId, label: plain(blockId), element };
}
