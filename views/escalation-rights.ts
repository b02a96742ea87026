import type { EscalatedPerson } from '../src/approvals/types.ts';
import type { EscalationGrant } from '../src/config/config-types.ts';
import { escapeMrkdwn, listInWords, mentionList } from './mrkdwn.ts';

/**
 * What an escalation lets people do, in words: "may approve operators steps (each approval counts as
 * one of the group's); not irreversible steps", or that it only asks them to follow up.
 */
export function grantsText(grants: readonly EscalationGrant[]): string {
  if (grants.length === 0) return 'asked to follow up — escalation lets them approve nothing themselves';
  return grants.map(grantText).join('; and ');
}

function grantText(grant: EscalationGrant): string {
  const which =
    grant.approve === '*'
      ? 'any step that needs review'
      : `${listInWords(grant.approve.map(escapeMrkdwn))} steps`;
  const counts =
    grant.counts === 'alone'
      ? 'one approval from them is enough for a step'
      : 'each approval counts as one of the group’s';
  const irreversible = grant.irreversible ? 'irreversible steps included' : 'not irreversible steps';
  return `may approve ${which} (${counts}; ${irreversible})`;
}

/**
 * One line per distinct set of rights: "⏫ Escalated to @a and @b (level 1): may approve …". People with
 * the same rights share a line.
 */
export function escalatedLines(people: readonly EscalatedPerson[], suffix = ''): string[] {
  const byRights = new Map<string, { users: string[]; levels: Set<number> }>();
  for (const person of people) {
    const key = grantsText(person.may);
    const entry = byRights.get(key) ?? { users: [], levels: new Set<number>() };
    entry.users.push(person.userId);
    for (const level of person.levels) entry.levels.add(level);
    byRights.set(key, entry);
  }
  return [...byRights].map(([rights, { users, levels }]) => {
    const shown = [...levels].sort((a, b) => a - b);
    const level =
      shown.length === 0
        ? ''
        : ` (${shown.length === 1 ? 'level' : 'levels'} ${listInWords(shown.map(String))})`;
    return `⏫ Escalated to ${mentionList(users)}${level}${suffix}: ${rights}.`;
  });
}
