import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeEntities, parseMrkdwn } from '../../src/emulator/page/client/mrkdwn.ts';
import { escapeMrkdwn } from '../../views/mrkdwn.ts';

const text = (value: string) => ({ kind: 'text', text: value });

describe('the page reads Slack mrkdwn', () => {
  it('shows escaped text as the characters it stands for, decoding entities once', () => {
    expect(parseMrkdwn('&lt;!channel&gt; &amp; &amp;lt;b&amp;gt;')).toEqual([text('<!channel> & &lt;b&gt;')]);
    expect(decodeEntities('&amp;amp;')).toBe('&amp;');
  });

  it('round-trips anything views/ escapes: no mention, link or broadcast can come out of plan text', () => {
    const hostile = '<!channel> <@U0FIN1> <https://evil.example|your bank> <#C0OPS> &lt; & >';
    expect(parseMrkdwn(escapeMrkdwn(hostile))).toEqual([text(hostile)]);
  });

  it('shows formatting marks in text views/ escaped as the marks themselves, for any text', () => {
    const visible = (nodes: readonly { kind: string }[]) =>
      nodes.every((node) => node.kind === 'text' || node.kind === 'break');
    const shown = (value: string) =>
      parseMrkdwn(escapeMrkdwn(value))
        .map((node) => (node.kind === 'text' ? node.text : node.kind === 'break' ? '\n' : `[${node.kind}]`))
        .join('')
        .replaceAll('\u200B', '');
    for (const typed of ['*bold* _it_ ~gone~ `code`', '```pre```', 'a *b* c', '_*both*_', 'x`y`z']) {
      expect(visible(parseMrkdwn(escapeMrkdwn(typed)))).toBe(true);
      expect(shown(typed)).toBe(typed);
    }
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom('*', '_', '~', '`', 'a', '1', ' ', '.', '>', '&', '<') }),
        (typed) => shown(typed) === typed,
      ),
    );
  });

  it('reads bold, italic, strike and code, nested where Slack nests them', () => {
    expect(parseMrkdwn('*Approved* by _Dana_ ~never~ `s2`')).toEqual([
      { kind: 'bold', children: [text('Approved')] },
      text(' by '),
      { kind: 'italic', children: [text('Dana')] },
      text(' '),
      { kind: 'strike', children: [text('never')] },
      text(' '),
      { kind: 'code', text: 's2' },
    ]);
    expect(parseMrkdwn('_*both*_')).toEqual([
      { kind: 'italic', children: [{ kind: 'bold', children: [text('both')] }] },
    ]);
  });

  it('leaves marks inside words and unmatched marks as text', () => {
    expect(parseMrkdwn('snake_case_name 2*3*4 *open')).toEqual([text('snake_case_name 2*3*4 *open')]);
    expect(parseMrkdwn('`*not bold*`')).toEqual([{ kind: 'code', text: '*not bold*' }]);
  });

  it('reads > lines as quotes and keeps line breaks', () => {
    expect(parseMrkdwn('Reply:\n>Hi Marta,\n>see you\nend')).toEqual([
      text('Reply:'),
      { kind: 'quote', children: [text('Hi Marta,'), { kind: 'break' }, text('see you')] },
      text('end'),
    ]);
    // An escaped > is text, not a quote: plan text cannot pose as the bot's quoting.
    expect(parseMrkdwn('&gt;not a quote')).toEqual([text('>not a quote')]);
  });

  it('reads ``` blocks as preformatted, with nothing inside formatted', () => {
    expect(parseMrkdwn('before```\n*x* <@U1>```after')).toEqual([
      text('before'),
      { kind: 'pre', text: '*x* <@U1>' },
      text('after'),
    ]);
    expect(parseMrkdwn('an ``` alone')).toEqual([text('an ``` alone')]);
  });

  it('reads mentions, channels, broadcasts and links from the app', () => {
    expect(parseMrkdwn('<@U0OP1> <@U0FIN1|sam> <#C0OPS|ops> <!here> <!subteam^S1|@finance>')).toEqual([
      { kind: 'user', userId: 'U0OP1', label: undefined },
      text(' '),
      { kind: 'user', userId: 'U0FIN1', label: 'sam' },
      text(' '),
      { kind: 'channel', channelId: 'C0OPS', label: 'ops' },
      text(' '),
      { kind: 'broadcast', label: '@here' },
      text(' '),
      { kind: 'broadcast', label: '@finance' },
    ]);
    expect(parseMrkdwn('<https://example.com/t?a=1&amp;b=2|ticket &lt;74991&gt;>')).toEqual([
      { kind: 'link', url: 'https://example.com/t?a=1&b=2', label: 'ticket <74991>' },
    ]);
    expect(parseMrkdwn('<javascript:alert(1)|click>')).toEqual([text('<javascript:alert(1)|click>')]);
    expect(parseMrkdwn('<!date^1775462400^{date}|Mon 6 Apr>')).toEqual([text('Mon 6 Apr')]);
  });
});
