import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  clipMrkdwn,
  escapeMrkdwn,
  joinWithinLimit,
  listInWords,
  mention,
  plural,
  quoteLines,
  truncate,
} from '../../views/mrkdwn.ts';
import { formatDay, formatInstant, formatInstantFromNow, formatSpan } from '../../views/time.ts';
import { unescapedMarkup } from './fixtures.ts';

describe('escapeMrkdwn', () => {
  it('turns Slack commands, mentions and links in plan text into text', () => {
    expect(escapeMrkdwn('<!channel> <@U123> <http://evil|click> & co')).toBe(
      '&lt;!channel&gt; &lt;@U123&gt; &lt;http://evil|click&gt; &amp; co',
    );
  });

  it('keeps formatting marks visible: a zero-width space beside each mark that could pair, none inside words', () => {
    expect(escapeMrkdwn('*bold* dl_55120')).toBe('\u200B*\u200Bbold\u200B*\u200B dl_55120');
    expect(escapeMrkdwn('`x`')).toBe('\u200B`\u200Bx\u200B`\u200B');
  });

  it('escapes an ampersand that already looks like an entity, so it reads as typed', () => {
    expect(escapeMrkdwn('&lt;')).toBe('&amp;lt;');
  });

  it('never leaves markup Slack would parse, for any text', () => {
    fc.assert(fc.property(fc.string(), (text) => unescapedMarkup(escapeMrkdwn(text), []).length === 0));
  });
});

describe('clipMrkdwn', () => {
  it('escapes text that fits', () => {
    expect(clipMrkdwn('a < b', 100)).toBe('a &lt; b');
  });

  it('says how much it cut', () => {
    expect(clipMrkdwn('x'.repeat(5000), 60)).toBe(`${'x'.repeat(35)}… (4,965 more characters)`);
  });

  it('never exceeds the limit, never splits an entity or a surrogate pair', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary', maxLength: 300 }),
        fc.integer({ min: 40, max: 400 }),
        (text, max) => {
          const clipped = clipMrkdwn(text, max);
          expect(clipped.length).toBeLessThanOrEqual(max);
          expect(unescapedMarkup(clipped, [])).toEqual([]);
          expect(clipped).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
        },
      ),
    );
  });
});

describe('truncate', () => {
  it('cuts plain text with an ellipsis within the limit', () => {
    expect(truncate('Reschedule delivery', 10)).toBe('Reschedul…');
    expect(truncate('short', 10)).toBe('short');
  });

  it('keeps emoji whole', () => {
    expect(truncate('ab😀cd', 4)).toBe('ab…');
  });
});

describe('joinWithinLimit', () => {
  const more = (left: number) => `…and ${left} more steps`;

  it('joins everything that fits', () => {
    expect(joinWithinLimit(['a', 'b'], 10, more)).toBe('a\nb');
  });

  it('ends with what it left out', () => {
    const lines = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`);
    const text = joinWithinLimit(lines, 60, more);
    expect(text).toBe('line 1\nline 2\nline 3\nline 4\nline 5\nline 6\n…and 14 more steps');
    expect(text.length).toBeLessThanOrEqual(60);
  });

  it('cuts a single line too long to fit beside the note', () => {
    const text = joinWithinLimit(['x'.repeat(100), 'y'], 50, more);
    expect(text.length).toBeLessThanOrEqual(50);
    expect(text).toMatch(/…\n…and 1 more steps$/);
  });
});

describe('mention', () => {
  it('mentions Slack user ids and prints anything else as escaped text', () => {
    expect(mention('U0FIN1')).toBe('<@U0FIN1>');
    expect(mention('!channel')).toBe('!channel');
    expect(mention('U1>|<!here')).toBe('U1&gt;|&lt;!here');
  });
});

describe('words', () => {
  it('lists and counts in English', () => {
    expect(listInWords(['a', 'b', 'c'])).toBe('a, b and c');
    expect(listInWords(['a'])).toBe('a');
    expect(plural(1, 'step')).toBe('1 step');
    expect(plural(1200, 'step')).toBe('1,200 steps');
  });

  it('quotes every line', () => {
    expect(quoteLines('one\ntwo')).toBe('>one\n>two');
  });
});

describe('time', () => {
  const now = Date.parse('2026-04-01T10:00:00Z');

  it('writes dates as dates', () => {
    expect(formatDay('2026-04-03')).toBe('Fri 3 Apr 2026');
    expect(formatDay('2026-02-30')).toBe('2026-02-30');
    expect(formatDay('soon')).toBe('soon');
  });

  it('writes instants in UTC, with the date when it is not today', () => {
    expect(formatInstant(Date.parse('2026-04-01T14:05:00Z'), { now })).toBe('14:05 UTC');
    expect(formatInstant(Date.parse('2026-04-02T09:30:00Z'), { now })).toBe('Thu 2 Apr, 09:30 UTC');
    expect(formatInstant(Date.parse('2027-01-02T09:30:00Z'), { now })).toBe('Sat 2 Jan 2027, 09:30 UTC');
  });

  it('writes instants in a given time zone', () => {
    expect(formatInstant(Date.parse('2026-04-01T14:05:00Z'), { now, tz: 'Europe/Oslo' })).toBe('16:05 GMT+2');
  });

  it('says how far away an instant is', () => {
    expect(formatInstantFromNow(now + 2 * 3_600_000, { now })).toBe('12:00 UTC (in 2 h)');
    expect(formatInstantFromNow(now - 90 * 60_000, { now })).toBe('08:30 UTC (1 h 30 min ago)');
    // Drawn a moment after submission, a 2-hour expiry still reads "in 2 h" (a card drawn twice says the same).
    expect(formatInstantFromNow(now + 2 * 3_600_000, { now: now + 700 })).toBe('12:00 UTC (in 2 h)');
    expect(formatSpan(30_000)).toBe('less than a minute');
    expect(formatSpan(3 * 86_400_000)).toBe('3 days');
  });
});
