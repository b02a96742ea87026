import { describe, expect, it } from 'vitest';
import type { UseCaseResult } from '../../src/approvals/types.ts';
import { checkMessageBlocks, checkView } from '../../src/emulator/block-kit-limits.ts';
import type { Decision, Diagnostic } from '../../src/pipeline/index.ts';
import { buildNotice, buildNoticeModal } from '../../views/notices.ts';
import {
  approval,
  FREIGHT_USERS,
  freightEdit,
  freightV1,
  mrkdwnTexts,
  NOW,
  runView,
  unescapedMarkup,
} from './fixtures.ts';

describe('notices', () => {
  const v1 = freightV1();
  const pending = runView(v1, { approvals: [approval(v1.plan.steps[1]!, 'U0OP1')] });
  const { previous, current, diff } = freightEdit();
  const decision = {} as Decision;
  const diagnostics: Diagnostic[] = Array.from({ length: 12 }, (_, i) => ({
    phase: 'authorize',
    code: 'check_failed',
    stepId: `s${i + 1}`,
    message: `step s${i + 1}: there is no invoice <in_${i}>`,
  }));
  const results: UseCaseResult[] = [
    { kind: 'pending', run: pending },
    { kind: 'awaiting', run: pending, approvedSteps: ['s2'] },
    { kind: 'awaiting', run: pending, approvedSteps: [] },
    { kind: 'approved', run: pending, decision },
    { kind: 'rejected', run: pending, decision },
    { kind: 'expired', run: pending },
    { kind: 'edited', run: runView(current), previous, diff },
    { kind: 'escalated', run: pending, level: 1, step: { kind: 'escalate', level: 1, repeat: 0 } },
    { kind: 'reminded', run: pending },
    { kind: 'stale', run: runView(current), currentVersion: 2 },
    { kind: 'already_decided', run: pending, status: 'approved', by: 'U0OP2' },
    { kind: 'already_decided', run: pending, status: 'expired', by: 'timer' },
    { kind: 'unauthorized', reason: 'only members of operators or finance can approve this plan' },
    { kind: 'invalid', phase: 'authorize', diagnostics },
    { kind: 'duplicate', run: pending },
    { kind: 'run_exists', runId: 'run-freight-1' },
    { kind: 'not_found', runId: 'run-<gone>' },
    { kind: 'unchanged', run: pending },
  ];

  it('has one short message for every use-case answer', () => {
    const texts = results.map((result) => mrkdwnTexts(buildNotice(result, { now: NOW }).blocks)[0]!.text);
    expect(texts).toMatchInlineSnapshot(`
      [
        "🕓 This plan is still waiting: <@U0OP1> or <@U0OP2> to approve \`s3\` (0 of 1 operators approval).",
        "👍 Your approval of step \`s2\` is recorded. Still waiting for <@U0OP1> or <@U0OP2> to approve \`s3\` (0 of 1 operators approval).",
        "👍 You have already approved every step you can approve here. Still waiting for <@U0OP1> or <@U0OP2> to approve \`s3\` (0 of 1 operators approval).",
        "✅ Approved: the agent has been told it may run the plan.",
        "❌ Rejected: the agent has been told, with your reason. Nothing will be executed.",
        "⌛ This plan expired at 12:00 UTC — nothing was executed.",
        "✏️ Version 2 is posted with your changes. Steps \`s2\` and \`s4\` need approval again.",
        "⏫ Escalated (level 1).",
        "⏰ A reminder was posted.",
        "⏭️ That was an older version of the plan: version 2 is current — see the newest card in the thread. Nothing was changed.",
        "This plan was already approved by <@U0OP2>. Nothing was changed.",
        "This plan already expired. Nothing was changed.",
        "🚫 You can't do that: only members of operators or finance can approve this plan. Nothing was changed.",
        "🚫 The plan failed validation (authorize phase), so nothing was changed:
      • step s1: there is no invoice &lt;in_0&gt;
      • step s2: there is no invoice &lt;in_1&gt;
      • step s3: there is no invoice &lt;in_2&gt;
      • step s4: there is no invoice &lt;in_3&gt;
      • step s5: there is no invoice &lt;in_4&gt;
      • step s6: there is no invoice &lt;in_5&gt;
      • step s7: there is no invoice &lt;in_6&gt;
      • step s8: there is no invoice &lt;in_7&gt;
      • step s9: there is no invoice &lt;in_8&gt;
      • step s10: there is no invoice &lt;in_9&gt;
      …and 2 more problems",
        "This plan was already submitted as run \`run-freight-1\`.",
        "A run \`run-freight-1\` already exists; nothing was changed.",
        "I can't find run \`run-&lt;gone&gt;\`. Nothing was changed.",
        "Nothing changed: your edit matches version 1.",
      ]
    `);
  });

  it('says when a click or form named no run at all, instead of showing an empty run id', () => {
    expect(buildNotice({ kind: 'not_found', runId: '' }).text).toBe(
      "I can't tell which plan that was for. Nothing was changed.",
    );
  });

  it('stays within limits and never lets plan text through unescaped', () => {
    for (const result of results) {
      const notice = buildNotice(result, { now: NOW });
      expect(checkMessageBlocks(notice.blocks)).toEqual([]);
      expect(checkView(buildNoticeModal(notice, 'Edit plan'))).toEqual([]);
      for (const { text } of mrkdwnTexts(notice)) expect(unescapedMarkup(text, FREIGHT_USERS)).toEqual([]);
    }
  });
});
