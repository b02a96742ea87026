/**
 * Each agent's `escalation` resolved: durations to ms, group names to their members, grants to their
 * defaults; levels must come in order and the reminder before the first of them.
 */
import type { DurationReader } from './config-durations.ts';
import type {
  ConfigInput,
  EscalationGrant,
  EscalationGrantInput,
  EscalationInput,
  EscalationLevel,
  EscalationLevelInput,
  EscalationPolicy,
} from './config-types.ts';
import type { NameChecks } from './cross-references.ts';

/** What resolving reads with and records into. */
export interface EscalationChecks {
  readonly duration: DurationReader;
  readonly names: NameChecks;
  readonly problems: string[];
  /** Each group's member list (a level naming a group notifies that very list). */
  readonly groups: Readonly<Record<string, readonly string[]>>;
  /** Groups read from Slack user groups: their members are known only once Slack answers. */
  readonly usergroups: Readonly<Record<string, string>>;
}

/** The escalation policy of each agent that has one. */
export function resolveEscalation(
  input: ConfigInput,
  checks: EscalationChecks,
): Record<string, EscalationPolicy> {
  const escalation: Record<string, EscalationPolicy> = {};
  for (const [agent, spec] of Object.entries(input.escalation ?? {})) {
    const where = `escalation.${agent}`;
    if (input.agents[agent] === undefined) {
      checks.problems.push(`${where}: unknown agent ${JSON.stringify(agent)}`);
    }
    escalation[agent] = resolvePolicy(where, spec, checks);
  }
  return escalation;
}

function resolvePolicy(where: string, spec: EscalationInput, checks: EscalationChecks): EscalationPolicy {
  const { duration, problems } = checks;
  let previous = 0;
  const levels = spec.levels.map((level, index): EscalationLevel => {
    const afterMs = duration(`${where}.levels[${index}].after`, level.after, '');
    if (afterMs > 0 && afterMs <= previous)
      problems.push(`${where}.levels[${index}]: must come after the level before it`);
    previous = afterMs;
    return resolveLevel(`${where}.levels[${index}]`, level, afterMs, checks);
  });
  const firstAfter = levels[0]?.afterMs ?? 0;
  const reminderAfterMs = spec.reminder && duration(`${where}.reminder.after`, spec.reminder.after, '');
  // Compared only when both are valid durations; an invalid one is already reported.
  if (
    reminderAfterMs !== undefined &&
    reminderAfterMs > 0 &&
    firstAfter > 0 &&
    reminderAfterMs >= firstAfter
  ) {
    problems.push(`${where}.reminder: must come before the first escalation level`);
  }
  return {
    levels,
    ...(spec.repeat === undefined
      ? {}
      : {
          repeat: {
            times: spec.repeat.times,
            everyMs: duration(`${where}.repeat.every`, spec.repeat.every, ''),
          },
        }),
    ...(reminderAfterMs === undefined ? {} : { reminderAfterMs }),
  };
}

/** One level: whom it notifies (a group's members, or the ids given) and what they may do. */
function resolveLevel(
  where: string,
  level: EscalationLevelInput,
  afterMs: number,
  checks: EscalationChecks,
): EscalationLevel {
  const may = level.may && resolveGrant(`${where}.may.approve`, level.may, checks.names);
  const rest = {
    ...(level.channel === undefined ? {} : { channel: level.channel }),
    ...(may === undefined ? {} : { may }),
  };
  if (typeof level.notify !== 'string') return { afterMs, notify: level.notify, ...rest };
  checks.names.group(`${where}.notify`, level.notify);
  const fromSlack = Object.hasOwn(checks.usergroups, level.notify);
  if (!fromSlack && checks.groups[level.notify]?.length === 0) {
    checks.problems.push(`${where}.notify: group ${level.notify} has no members to notify`);
  }
  return { afterMs, notify: checks.groups[level.notify] ?? [], group: level.notify, ...rest };
}

function resolveGrant(where: string, may: EscalationGrantInput, names: NameChecks): EscalationGrant {
  const grant = {
    approve: may.approve === '*' ? ('*' as const) : [...may.approve],
    counts: may.counts ?? 'member',
    irreversible: may.irreversible ?? false,
  };
  if (grant.approve !== '*') for (const group of grant.approve) names.group(where, group);
  return grant;
}
