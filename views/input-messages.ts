/** What form inputs say is wrong, in the person's terms (shared by the edit and reject forms). */

/** "This is 2,134 characters; it can hold at most 2,000. Shorten it by 134." */
export function tooLongMessage(length: number, limit: number): string {
  const n = (count: number) => count.toLocaleString('en-US');
  return `This is ${n(length)} characters; it can hold at most ${n(limit)}. Shorten it by ${n(length - limit)}.`;
}

/** "Up to 2,000 characters." — a hint under a text input whose limit is below Slack's own. */
export function lengthHint(limit: number): string {
  return `Up to ${limit.toLocaleString('en-US')} characters.`;
}
