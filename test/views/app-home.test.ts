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
