import { describe, expect, it } from 'vitest';
import { freightPlan } from '../../examples/freight/plans.ts';
import { checkMessageBlocks, checkView } from '../../src/emulator/block-kit-limits.ts';
import { parseMrkdwn } from '../../src/emulator/page/client/mrkdwn.ts';
import { diffPlans, validate } from '../../src/pipeline/index.ts';
import { buildApprovalCard } from '../../views/card.ts';
import { buildDiffMessage } from '../../views/diff-message.ts';
import { buildEditModal } from '../../views/edit-modal.ts';
import { buildNotice } from '../../views/notices.ts';
import { buildRejectModal } from '../../views/reject-modal.ts';
import {
  agentVersion,
  FREIGHT_USERS,
  freightConfig,
  mrkdwnTexts,
  NOW,
  orderArgs,
  runView,
  shopConfig,
  shopRun,
  unescapedMarkup,
  validPlan,
} from './fixtures.ts';

/** Everything Slack would act on if it reached mrkdwn as is. */
const HOSTILE = 'Hi <!channel> <@U123> <http://evil|click> & <!subteam^S1|@ops> &amp; <#C0OPS>';

describe('plan text never reaches mrkdwn unescaped', () => {
  const base = freightPlan({ now: NOW });
  const v1 = agentVersion(
    validPlan({
      ...base,
      summary: HOSTILE,
      context: { ...base.context, [HOSTILE]: HOSTILE, nested: { note: HOSTILE } },
      steps: [
        { id: 's1', tool: 'add_note', args: { ticket_id: HOSTILE, note: `${HOSTILE}\n${HOSTILE}` } },
        { id: 's2', tool: 'reschedule_delivery', args: { delivery_id: 'dl_55120', window: '2026-04-03' } },
        { id: 's3', tool: 'send_reply', args: { ticket_id: '74991', body: HOSTILE } },
      ],
    }),
  );
  const edited = validPlan(
    {
      ...base,
      summary: HOSTILE,
      steps: [
        { id: 's1', tool: 'add_note', args: { ticket_id: `${HOSTILE}!`, note: HOSTILE } },
        { id: 's3', tool: 'send_reply', args: { ticket_id: '74991', body: HOSTILE } },
        { id: 's4', tool: 'add_note', args: { ticket_id: HOSTILE, note: HOSTILE } },
      ],
    },
    { edit: { editorId: 'U0FIN1', base: v1.plan } },
  );
  const v2 = {
    ...agentVersion(edited),
    version: 2,
    provenance: { ...v1.provenance, s4: { by: 'user', userId: 'U0FIN1', version: 2 } as const },
  };

  it('is caught by the check when it is not escaped', () => {
    expect(unescapedMarkup(HOSTILE, FREIGHT_USERS)).toEqual([
      '<!channel>',
      '<@U123>',
      '<http://evil|click>',
      '<!subteam^S1|@ops>',
      '<#C0OPS>',
      '& at 42',
    ]);
  });

  const expectClean = (output: unknown) => {
    const texts = mrkdwnTexts(output);
    expect(texts.length).toBeGreaterThan(0);
    for (const { at, text } of texts)
      expect({ at, problems: unescapedMarkup(text, FREIGHT_USERS) }).toEqual({ at, problems: [] });
  };

  it('on the card, pending and decided', () => {
    const rejected = runView(v1, { status: 'rejected', decidedBy: 'U0OP1', decidedAt: NOW, reason: HOSTILE });
    for (const run of [runView(v1), rejected]) {
      const card = buildApprovalCard({
        run,
        config: freightConfig,
        now: NOW,
        outcomes: [{ stepId: 's1', status: 'failed', detail: HOSTILE, at: NOW }],
      });
      expect(checkMessageBlocks(card.blocks)).toEqual([]);
      expect(JSON.stringify(card)).toContain('&lt;!channel&gt;');
      expectClean(card);
    }
  });

  it('in the diff message', () => {
    const message = buildDiffMessage({
      runId: v1.plan.runId,
      previous: v1,
      current: v2,
      diff: diffPlans(v1.plan, v2.plan),
      editorId: 'U0FIN1',
      config: freightConfig,
      now: NOW,
    });
    expect(checkMessageBlocks(message.blocks)).toEqual([]);
    expectClean(message);
  });

  it('in the edit and reject modals', () => {
    expectClean(buildEditModal({ run: runView(v1), config: freightConfig, editorId: 'U0OP1' }));
    const shop = shopRun([{ id: 's1', tool: 'update_order', args: { ...orderArgs, reference: HOSTILE } }]);
    const modal = buildEditModal({ run: shop, config: shopConfig, editorId: 'U0OP1' });
    expect(checkView(modal)).toEqual([]);
    expect(JSON.stringify(modal.blocks)).toContain('&lt;!channel&gt;');
    expectClean(modal);
    expectClean(buildRejectModal({ runId: 'run-1', version: 1, agent: 'freight-ops' }));
  });

  it('in notices listing diagnostics', async () => {
    const result = await validate(
      { ...base, steps: [{ id: 's1', tool: 'issue_refund', args: { invoice_id: HOSTILE, amount: 1 } }] },
      { config: freightConfig.pipeline, now: NOW },
    );
    if (result.ok) throw new Error('expected an invalid plan');
    expectClean(buildNotice({ kind: 'invalid', phase: result.phase, diagnostics: result.diagnostics }));
    expectClean(buildNotice({ kind: 'unauthorized', reason: HOSTILE }));
  });
});

describe('agent-written text shows the exact characters it holds', () => {
  const MARKED = '*URGENT* _call_ ~now~ `rm -rf` ```x```';
  const base = freightPlan({ now: NOW });
  const v1 = agentVersion(
    validPlan({
      ...base,
      summary: MARKED,
      steps: [
        { id: 's1', tool: 'add_note', args: { ticket_id: '74991', note: MARKED } },
        { id: 's2', tool: 'send_reply', args: { ticket_id: '74991', body: `Hi\n${MARKED}` } },
      ],
    }),
  );
  type Node = ReturnType<typeof parseMrkdwn>[number];
  const formatted = (nodes: readonly Node[]): Node[] =>
    nodes.flatMap((node) =>
      node.kind === 'quote'
        ? formatted(node.children)
        : node.kind === 'text' || node.kind === 'break' || node.kind === 'user'
          ? []
          : [node],
    );
  /** Formatting the Slack stand-in's page reads in the messages that holds agent text (ours is bold labels, code ids). */
  const formattedAgentText = (output: unknown) =>
    mrkdwnTexts(output).flatMap(({ at, text }) =>
      formatted(parseMrkdwn(text))
        .filter((node) => /URGENT|call|now|rm -rf|\bx\b/.test(JSON.stringify(node)))
        .map((node) => ({ at, node })),
    );

  it('on the card: no mark in the summary or an argument formats anything, and every mark is shown', () => {
    const card = buildApprovalCard({
      run: runView(v1),
      config: freightConfig,
      now: NOW,
      outcomes: [{ stepId: 's1', status: 'failed', detail: MARKED, at: NOW }],
    });
    expect(formattedAgentText(card)).toEqual([]);
    const shown = mrkdwnTexts(card)
      .map(({ text }) => text)
      .join('\n')
      .replaceAll('\u200B', '');
    expect(shown).toContain(MARKED);
  });

  it('in the diff message', () => {
    const edited = validPlan(
      {
        ...base,
        summary: MARKED,
        steps: [{ id: 's1', tool: 'add_note', args: { ticket_id: '74991', note: `${MARKED}!` } }],
      },
      { edit: { editorId: 'U0OP1', base: v1.plan } },
    );
    const v2 = { ...agentVersion(edited), version: 2 };
    const message = buildDiffMessage({
      runId: v1.plan.runId,
      previous: v1,
      current: v2,
      diff: diffPlans(v1.plan, v2.plan),
      editorId: 'U0OP1',
      config: freightConfig,
      now: NOW,
    });
    expect(formattedAgentText(message)).toEqual([]);
  });
});
