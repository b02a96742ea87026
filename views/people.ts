import { escapeMrkdwn, listInWords, mention } from './mrkdwn.ts';

/**
 * Display names by Slack user id (users.info's, or the config's), for views that name people. A person
 * missing from it is shown as a mention, which Slack draws as their name.
 */
export type PeopleNames = Readonly<Record<string, string>>;

/** How many people a list names before it says "+N more". */
export const NAMED_PEOPLE_MAX = 5;

/** A person, as mrkdwn: their display name (escaped) when known, else a mention. */
export function person(userId: string, names: PeopleNames = {}): string {
  const name = names[userId];
  return name === undefined || name.trim() === '' ? mention(userId) : escapeMrkdwn(name);
}

/**
 * People for a sentence, up to `max` of them, then "+N more":
 * "Dana Ortiz, Fay Chen and Ravi Nair", "Fay Chen or Ravi Nair", "A, B, C, D, E +2 more".
 */
export function peopleList(
  userIds: readonly string[],
  names: PeopleNames = {},
  options: { readonly conjunction?: 'and' | 'or'; readonly max?: number } = {},
): string {
  const max = options.max ?? NAMED_PEOPLE_MAX;
  const shown = userIds.slice(0, max).map((userId) => person(userId, names));
  const more = userIds.length - shown.length;
  if (more > 0) return `${shown.join(', ')} +${more.toLocaleString('en-US')} more`;
  const conjunction = options.conjunction ?? 'and';
  return conjunction === 'and'
    ? listInWords(shown)
    : shown.length <= 1
      ? (shown[0] ?? '')
      : `${shown.slice(0, -1).join(', ')} or ${shown.at(-1)}`;
}

/** Every user id a run's messages may name, for looking their names up before rendering. */
export function peopleShown(run: {
  readonly awaiting: readonly { readonly mayAct: readonly string[]; readonly approvers: readonly string[] }[];
  readonly approvedBy: readonly string[];
  readonly decidedBy?: string;
}): string[] {
  const ids = new Set<string>();
  for (const awaited of run.awaiting) {
    for (const userId of awaited.mayAct.slice(0, NAMED_PEOPLE_MAX)) ids.add(userId);
    for (const userId of awaited.approvers) ids.add(userId);
  }
  for (const userId of run.approvedBy) ids.add(userId);
  if (run.decidedBy !== undefined) ids.add(run.decidedBy);
  return [...ids];
}
