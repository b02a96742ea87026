/** The App Home tab and the `/countersign` answers, rendered from inbox entries (no I/O). */
import { describe, expect, it } from 'vitest';
import type { InboxEntry } from '../../src/approvals/inbox.ts';
import { buildAppHome, buildCommandHelp, buildPendingAnswer, buildRunAnswer } from '../../views/index.ts';

const NOW = Date.parse('2026-04-01T10:00:00Z');
const LINK = 'https://acme.slack.com/archives/C0OPS/p1775037600000100';

const waiting: InboxEntry = {
  runId: 'run-1',
  agent: 'freight-ops',
  summary: 'Rebook <!channel> & *tell* the customer',
  status: 'pending',
  version: 2,
  expiresAt: NOW + 2 * 3600_000,
  stepsToApprove: ['s2', 's3'],
  mayAct: true,
};
const escalated: InboxEntry = { ...waiting, runId: 'run-2', stepsToApprove: [], mayAct: false };
const decided: InboxEntry = {
  ...waiting,
  runId: 'run-3',
  status: 'approved',
  stepsToApprove: [],
  mayAct: false,
  decidedBy: 'U0OP1',
  decidedAt: NOW - 5 * 60_000,
};

function texts(blocks: readonly unknown[]): string[] {
  return (blocks as { type: string; text?: { text: string }; elements?: { text: string }[] }[]).map(
    (block) => `${block.type}: ${block.text?.text ?? block.elements?.map((e) => e.text).join(' ') ?? ''}`,
  );
}

describe('buildAppHome', () => {
  it('shows the three lists, each entry linked to its card, with what waits for the person', () => {
    const view = buildAppHome({
      inbox: { waiting: [waiting], escalated: [escalated], decided: [decided] },
      links: { 'run-1': LINK, 'run-3': LINK },
      now: NOW,
    });
    expect(view.type).toBe('home');
    expect(texts(view.blocks)).toMatchInlineSnapshot(`
      [
        "header: Waiting for you (1)",
        "section: *<https://acme.slack.com/archives/C0OPS/p1775037600000100|freight-ops: Rebook &lt;!channel&gt; &amp; ​*​tell​*​ the customer>*
      Your approval is needed for \`s2\` and \`s3\` · expires 12:00 UTC (in 2 h) · \`run-1\` · v2",
        "divider: ",
        "header: Escalated to you (1)",
        "section: *freight-ops: Rebook &lt;!channel&gt; &amp; ​*​tell​*​ the customer*
      For you to follow up — you cannot approve it · expires 12:00 UTC (in 2 h) · \`run-2\` · v2",
        "divider: ",
        "header: Recently decided (1)",
        "section: *<https://acme.slack.com/archives/C0OPS/p1775037600000100|freight-ops: Rebook &lt;!channel&gt; &amp; ​*​tell​*​ the customer>*
      ✅ Approved by <@U0OP1> 09:55 UTC · \`run-3\` · v2",
        "context: Updated 10:00 UTC · \`/countersign help\` for the command",
      ]
    `);
  });

  it('says when a list is empty, and never links to a URL that could break out of the link', () => {
    const view = buildAppHome({
      inbox: { waiting: [waiting], escalated: [], decided: [] },
      links: { 'run-1': 'https://evil.example/x|<!channel>' },
      now: NOW,
    });
    const all = texts(view.blocks).join('\n');
    expect(all).toContain('Nothing was escalated to you.');
    expect(all).toContain('No decided plans of yours yet.');
    expect(all).not.toContain('evil.example');
  });

  it('stays within Slack’s 100 blocks however many runs there are, saying how many more', () => {
    const many = Array.from({ length: 80 }, (_, i) => ({ ...waiting, runId: `run-${i}` }));
    const view = buildAppHome({
      inbox: { waiting: many, escalated: many, decided: many },
      links: {},
      now: NOW,
    });
    expect(view.blocks.length).toBeLessThanOrEqual(100);
    expect(texts(view.blocks).join('\n')).toContain('…and 65 more runs.');
  });
});

describe('/countersign answers', () => {
  it('help lists the subcommands; an unknown one is named in plain words', () => {
    expect(texts(buildCommandHelp().blocks).join('\n')).toMatch(
      /countersign pending.*\n.*show <run id>.*\n.*help/,
    );
    expect(texts(buildCommandHelp('approve <!here>').blocks).join('\n')).toContain(
      "I don't know “approve &lt;!here&gt;”",
    );
  });

  it('pending lists what waits and what was escalated, or says nothing does', () => {
    const answer = buildPendingAnswer({
      inbox: { waiting: [waiting], escalated: [escalated], decided: [decided] },
      links: { 'run-1': LINK },
      now: NOW,
    });
    const text = texts(answer.blocks).join('\n');
    expect(text).toContain('*Waiting for you (1)*');
    expect(text).toContain('*Escalated to you (1)*');
    expect(text).not.toContain('run-3');
    const none = buildPendingAnswer({
      inbox: { waiting: [], escalated: [], decided: [] },
      links: {},
      now: NOW,
    });
    expect(none.text).toBe('Nothing waits for you');
  });

  it('show says where one run stands, or that there is no such run', () => {
    expect(
      texts(buildRunAnswer('run-3', decided, { links: { 'run-3': LINK }, now: NOW }).blocks).join(),
    ).toContain('Approved by <@U0OP1>');
    expect(texts(buildRunAnswer('nope', undefined, { links: {}, now: NOW }).blocks).join()).toContain(
      'There is no plan with the run id `nope`',
    );
  });
});

describe('the leads’ section of the Home tab', () => {
  const empty = { waiting: [], escalated: [], decided: [] };
  const summary = (agent: string, alarm: boolean) => ({
    stats: {
      agent,
      windowMs: 24 * 3_600_000,
      plans: 30,
      edited: 12,
      heavy: 9,
      share: 0.3,
      mostEdited: [{ runId: 'run-9', touchedSteps: 4, totalSteps: 4 }],
    },
    alarm,
    recurring: [
      {
        pattern: {
          key: 'added_before:add_note:send_reply',
          kind: 'added_before' as const,
          tool: 'add_note',
          detail: 'send_reply',
        },
        plans: 8,
        editedPlans: 12,
        editors: 3,
        examples: [],
        suggestion: 'in 8 of 12 edited plans an operator added `add_note` before `send_reply` <!channel>',
      },
    ],
  });

  it('is shown only to leads, with the window, the alarm, the most edited run linked and the suggestions', () => {
    expect(texts(buildAppHome({ inbox: empty, links: {}, now: NOW }).blocks).join('\n')).not.toContain(
      'agents you lead',
    );
    const home = texts(
      buildAppHome({
        inbox: empty,
        links: { 'run-9': LINK },
        now: NOW,
        edits: [summary('freight-ops', true)],
      }).blocks,
    ).join('\n');
    expect(home).toContain('How people edit the plans of agents you lead');
    expect(home).toContain(
      '*freight-ops* — last 24 h: 30 plans, 12 edited, 9 more than half rewritten (30%) · ⚠️ *drift alarm raised*',
    );
    expect(home).toContain(`<${LINK}|run-9 (4 of 4 steps)>`);
    // Code spans kept; anything that could ping or link is not.
    expect(home).toContain('added `add_note` before `send_reply` &lt;!channel&gt;');
  });

  it('shows at most five agents and stays within the tab’s 100 blocks', () => {
    const edits = Array.from({ length: 9 }, (_, i) => summary(`agent-${i}`, false));
    const many = Array.from({ length: 40 }, (_, i) => ({ ...waiting, runId: `run-${i}` }));
    const view = buildAppHome({
      inbox: { waiting: many, escalated: many, decided: [] },
      links: {},
      now: NOW,
      edits,
    });
    expect(view.blocks.length).toBeLessThanOrEqual(100);
    const text = texts(view.blocks).join('\n');
    expect(text).toContain('agent-4');
    expect(text).not.toContain('agent-5');
  });
});
