/**
 * Slack mrkdwn for untrusted text. Slack reads `<…>` as commands (`<!channel>`, `<@U…>`, `<http://x|y>`)
 * and `&` as the start of an entity, so plan text is escaped before it reaches any mrkdwn field; and
 * every cut says what it left out instead of letting Slack reject an over-long field.
 */

/**
 * Escapes `&`, `<` and `>`, and keeps formatting marks (`*`, `_`, `~`, `` ` ``) visible instead of
 * formatting: a mark that could open or close bold, italics, strike or code gets a zero-width space on
 * each side (Slack does not pair marks next to one), so text renders as exactly the characters it
 * holds. A mark inside a word (`dl_55120`) formats nothing and is left alone.
 * @example escapeMrkdwn('<!channel> & co') // "&lt;!channel&gt; &amp; co"
 * @example escapeMrkdwn('*bold*') // "\u200B*\u200Bbold\u200B*\u200B"
 */
export function escapeMrkdwn(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const char = text[i] ?? '';
    if (char === '&') out += '&amp;';
    else if (char === '<') out += '&lt;';
    else if (char === '>') out += '&gt;';
    else if (isMark(char) && mayFormat(text, i)) out += `${ZWSP}${char}${ZWSP}`;
    else out += char;
  }
  return out;
}

/** Zero-width space: keeps a formatting mark from pairing with another, and shows nothing. */
export const ZWSP = '\u200B';

function isMark(char: string): boolean {
  return char === '*' || char === '_' || char === '~' || char === '`';
}

const WORD_CHAR = /[\p{L}\p{N}]/u;

/** A backtick always may (code spans open anywhere); other marks unless letters or digits are on both sides. */
function mayFormat(text: string, at: number): boolean {
  if (text[at] === '`') return true;
  const before = text[at - 1];
  const after = text[at + 1];
  return !(before !== undefined && after !== undefined && WORD_CHAR.test(before) && WORD_CHAR.test(after));
}

/** Length of one character once escaped, at most (a mark may take zero-width spaces). */
function escapedLength(char: string): number {
  return char === '&' ? 5 : char === '<' || char === '>' ? 4 : isMark(char) ? 3 : char.length;
}

/**
 * Escapes untrusted text and cuts it to at most `max` characters (of the escaped text), ending with
 * "… (N more characters)" when cut. Never splits an entity or a surrogate pair.
 * @example clipMrkdwn('a'.repeat(5000), 100) // "aaa…aaa… (4,9xx more characters)"
 */
export function clipMrkdwn(text: string, max: number): string {
  const escaped = escapeMrkdwn(text);
  if (escaped.length <= max) return escaped;
  const chars = Array.from(text);
  // The note is sized for the largest count it could show, so the result never overshoots `max`.
  const budget = max - moreCharacters(chars.length).length;
  let used = 0;
  let count = 0;
  for (const char of chars) {
    used += escapedLength(char);
    if (used > budget) break;
    count++;
  }
  return `${escapeMrkdwn(chars.slice(0, count).join(''))}${moreCharacters(chars.length - count)}`;
}

/**
 * Cuts trusted or plain text (plain_text fields, option labels) to at most `max` characters, ending
 * with "…" when cut. Never splits a surrogate pair.
 */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  let kept = '';
  for (const char of text) {
    if (kept.length + char.length + 1 > max) break;
    kept += char;
  }
  return `${kept}…`;
}

function moreCharacters(count: number): string {
  return `… (${count.toLocaleString('en-US')} more ${count === 1 ? 'character' : 'characters'})`;
}

/**
 * Joins lines with newlines, as many as fit in `max` characters; when some are left out, the last line
 * says so (`more(n)`, e.g. "…and 12 more steps"). Lines are expected to fit on their own; one that does
 * not is cut.
 */
export function joinWithinLimit(
  lines: readonly string[],
  max: number,
  more: (left: number) => string,
): string {
  const all = lines.join('\n');
  if (all.length <= max) return all;
  const reserve = more(lines.length).length + 1;
  const kept: string[] = [];
  let used = 0;
  for (const line of lines) {
    const length = line.length + (kept.length > 0 ? 1 : 0);
    if (used + length + reserve > max) break;
    kept.push(line);
    used += length;
  }
  if (kept.length === 0) {
    // Not even the first line fits beside the note: show what fits of it.
    const first = truncate(lines[0] ?? '', Math.max(1, max - reserve));
    return `${first}\n${more(lines.length - 1)}`;
  }
  return [...kept, more(lines.length - kept.length)].join('\n');
}

/** Slack user and bot ids as Slack issues them; anything else is printed, escaped, not mentioned. */
const SLACK_USER_ID = /^[UW][A-Z0-9]{1,31}$/;

/**
 * A mention for a user id that comes from Slack or the config (trusted); anything not shaped like a
 * Slack user id is rendered as escaped text, so it can never become a broadcast or a link.
 * @example mention('U0FIN1') // "<@U0FIN1>"
 */
export function mention(userId: string): string {
  return SLACK_USER_ID.test(userId) ? `<@${userId}>` : escapeMrkdwn(userId);
}

/** Mentions joined for a sentence: "<@U1>, <@U2> and <@U3>". */
export function mentionList(userIds: readonly string[]): string {
  return listInWords(userIds.map(mention));
}

/** "a", "a and b", "a, b and c". */
export function listInWords(items: readonly string[]): string {
  if (items.length <= 1) return items[0] ?? '';
  return `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

/** "1 step", "3 steps". */
export function plural(count: number, singular: string, pluralForm = `${singular}s`): string {
  return `${count.toLocaleString('en-US')} ${count === 1 ? singular : pluralForm}`;
}

/** Puts each line of (already escaped) text behind `>`, so it reads as quoted and cannot pose as ours. */
export function quoteLines(escaped: string): string {
  return escaped
    .split('\n')
    .map((line) => `>${line}`)
    .join('\n');
}
