/**
 * Slack mrkdwn, read into a small tree of text nodes (no DOM, no HTML): `*bold*`, `_italic_`,
 * `~strike~`, `` `code` ``, ```` ```preformatted``` ````, `>` quotes, and `<…>` tokens — user mentions,
 * channels, `<!here>`-style broadcasts and links. `&lt;`, `&gt;` and `&amp;` are decoded into the
 * characters they stand for, so text escaped by the app shows as itself. Anything else is text.
 */

/** One piece of formatted text. Every string in it is shown as text, never parsed again. */
export type MrkdwnNode =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'bold' | 'italic' | 'strike'; readonly children: readonly MrkdwnNode[] }
  | { readonly kind: 'code' | 'pre'; readonly text: string }
  | { readonly kind: 'quote'; readonly children: readonly MrkdwnNode[] }
  | { readonly kind: 'break' }
  /** `<@U0FIN1>` or `<@U0FIN1|sam>` */
  | { readonly kind: 'user'; readonly userId: string; readonly label: string | undefined }
  /** `<#C0OPS>` or `<#C0OPS|ops-approvals>` */
  | { readonly kind: 'channel'; readonly channelId: string; readonly label: string | undefined }
  /** `<!here>`, `<!channel>`, `<!everyone>`, `<!subteam^S…|@handle>`: shown as `@here` etc. */
  | { readonly kind: 'broadcast'; readonly label: string }
  /** `<https://…|label>`: shown as its label, with the URL beside it (never followed by the page). */
  | { readonly kind: 'link'; readonly url: string; readonly label: string };

const EMPHASIS = { '*': 'bold', _: 'italic', '~': 'strike' } as const;
type EmphasisMark = keyof typeof EMPHASIS;

/**
 * Parses mrkdwn.
 * @example parseMrkdwn('*Hi* &lt;@U1&gt;') // [{ kind: 'bold', children: [{ kind: 'text', text: 'Hi' }] }, { kind: 'text', text: ' <@U1>' }]
 */
export function parseMrkdwn(text: string): MrkdwnNode[] {
  const nodes: MrkdwnNode[] = [];
  // ``` … ``` first: nothing inside is formatted. An unclosed fence is text.
  const parts = text.split('```');
  parts.forEach((part, index) => {
    const isPre = index % 2 === 1 && index < parts.length - 1;
    if (isPre) {
      nodes.push({ kind: 'pre', text: decodeEntities(part.replace(/^\n/, '')) });
      return;
    }
    const body = index % 2 === 1 ? `\`\`\`${part}` : part;
    nodes.push(...parseLines(body));
  });
  return merge(nodes);
}

/** Lines, with runs of `>` lines as quotes and line breaks between the rest. */
function parseLines(text: string): MrkdwnNode[] {
  if (text === '') return [];
  const nodes: MrkdwnNode[] = [];
  const lines = text.split('\n');
  let quote: string[] = [];
  const flushQuote = () => {
    if (quote.length === 0) return;
    nodes.push({ kind: 'quote', children: joinLines(quote) });
    quote = [];
  };
  lines.forEach((line, index) => {
    if (line.startsWith('>')) {
      quote.push(line.slice(1).replace(/^ /, ''));
      return;
    }
    flushQuote();
    if (index > 0 && nodes.length > 0 && nodes.at(-1)?.kind !== 'quote') nodes.push({ kind: 'break' });
    nodes.push(...parseInline(line));
  });
  flushQuote();
  return nodes;
}

function joinLines(lines: readonly string[]): MrkdwnNode[] {
  return lines.flatMap((line, index) => [
    ...(index > 0 ? [{ kind: 'break' } as const] : []),
    ...parseInline(line),
  ]);
}

/** One line: code spans, `<…>` tokens and emphasis; the rest is text. */
export function parseInline(line: string): MrkdwnNode[] {
  const nodes: MrkdwnNode[] = [];
  let text = '';
  const flush = () => {
    if (text !== '') nodes.push({ kind: 'text', text: decodeEntities(text) });
    text = '';
  };
  let i = 0;
  while (i < line.length) {
    const char = line[i] ?? '';
    if (char === '`' && line[i + 1] !== ZWSP) {
      const end = closingTick(line, i);
      if (end !== undefined) {
        flush();
        nodes.push({ kind: 'code', text: decodeEntities(line.slice(i + 1, end)) });
        i = end + 1;
        continue;
      }
    }
    if (char === '<') {
      const end = line.indexOf('>', i + 1);
      if (end > i + 1) {
        flush();
        nodes.push(angleToken(line.slice(i + 1, end)));
        i = end + 1;
        continue;
      }
    }
    if (isEmphasisMark(char) && opens(line, i)) {
      const end = closingMark(line, i);
      if (end !== undefined) {
        flush();
        nodes.push({ kind: EMPHASIS[char], children: parseInline(line.slice(i + 1, end)) });
        i = end + 1;
        continue;
      }
    }
    text += char;
    i += 1;
  }
  flush();
  return nodes;
}

function isEmphasisMark(char: string): char is EmphasisMark {
  return char === '*' || char === '_' || char === '~';
}

const WORD = /[\p{L}\p{N}]/u;
const SPACE = /\s/u;
/** A zero-width space beside a mark keeps it from pairing, as in Slack (views/mrkdwn.ts escapes marks so). */
const ZWSP = '\u200B';

/** A mark opens when it starts a word: not after a letter or digit, and not before a space. */
function opens(line: string, at: number): boolean {
  const before = line[at - 1];
  const after = line[at + 1];
  return (
    (before === undefined || !WORD.test(before)) &&
    after !== undefined &&
    !SPACE.test(after) &&
    after !== ZWSP
  );
}

/** The backtick that ends a code span opened at `at`: the next one not kept apart by a zero-width space. */
function closingTick(line: string, at: number): number | undefined {
  for (let end = line.indexOf('`', at + 1); end !== -1; end = line.indexOf('`', end + 1)) {
    if (end === at + 1) return undefined;
    if (line[end - 1] !== ZWSP) return end;
  }
  return undefined;
}

/** The matching mark that ends a word: not after a space, and not before a letter or digit. */
function closingMark(line: string, at: number): number | undefined {
  const mark = line[at] ?? '';
  for (let end = line.indexOf(mark, at + 2); end !== -1; end = line.indexOf(mark, end + 1)) {
    const before = line[end - 1] ?? '';
    const after = line[end + 1];
    if (!SPACE.test(before) && before !== ZWSP && (after === undefined || !WORD.test(after))) return end;
  }
  return undefined;
}

/** What a `<…>` means: a mention, a channel, a broadcast, a link — or, if none of those, its text. */
function angleToken(token: string): MrkdwnNode {
  const bar = token.indexOf('|');
  const target = bar === -1 ? token : token.slice(0, bar);
  const label = bar === -1 ? undefined : decodeEntities(token.slice(bar + 1));
  if (/^@[UW][A-Z0-9]+$/.test(target)) return { kind: 'user', userId: target.slice(1), label };
  if (/^#C[A-Z0-9]+$/.test(target)) return { kind: 'channel', channelId: target.slice(1), label };
  if (target.startsWith('!')) {
    const command = target.slice(1);
    if (command === 'here' || command === 'channel' || command === 'everyone') {
      return { kind: 'broadcast', label: `@${command}` };
    }
    if (command.startsWith('subteam^')) return { kind: 'broadcast', label: label ?? '@group' };
    // <!date^…|fallback> and other commands: Slack shows the fallback text.
    return { kind: 'text', text: label ?? '' };
  }
  if (/^(https?|mailto|tel|slack):/i.test(target)) {
    const url = decodeEntities(target);
    return { kind: 'link', url, label: label ?? url };
  }
  return { kind: 'text', text: decodeEntities(`<${token}>`) };
}

/** `&lt;` `&gt;` `&amp;` → `<` `>` `&`, in one pass (so `&amp;lt;` is the text `&lt;`). */
export function decodeEntities(text: string): string {
  return text.replace(/&(lt|gt|amp);/g, (_entity, name: string) =>
    name === 'lt' ? '<' : name === 'gt' ? '>' : '&',
  );
}

/** Adjacent text nodes as one. */
function merge(nodes: readonly MrkdwnNode[]): MrkdwnNode[] {
  const merged: MrkdwnNode[] = [];
  for (const node of nodes) {
    const last = merged.at(-1);
    if (node.kind === 'text' && last?.kind === 'text')
      merged[merged.length - 1] = { kind: 'text', text: last.text + node.text };
    else merged.push(node);
  }
  return merged;
}
