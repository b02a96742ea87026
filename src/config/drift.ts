/** The agents' drift alarms (`agents.<name>.drift`), resolved, and each agent's edit window. */

import type { DurationReader } from './config-durations.ts';
import type { ConfigInput, CountersignConfig, DriftPolicy } from './config-types.ts';
import type { NameChecks } from './cross-references.ts';

/** The edit window of an agent without a drift alarm. */
export const DEFAULT_EDIT_WINDOW = '24h';

export function resolveDrift(
  input: ConfigInput,
  duration: DurationReader,
  names: NameChecks,
): Pick<CountersignConfig, 'drift' | 'editWindowMs'> {
  const drift: Record<string, DriftPolicy> = {};
  const editWindowMs: Record<string, number> = {};
  for (const [agent, spec] of Object.entries(input.agents)) {
    const where = `agents.${agent}.drift`;
    const windowMs = duration(`${where}.window`, spec.drift?.window, DEFAULT_EDIT_WINDOW);
    editWindowMs[agent] = windowMs;
    if (spec.drift === undefined) continue;
    if (typeof spec.drift.notify === 'string') names.group(`${where}.notify`, spec.drift.notify);
    drift[agent] = {
      above: spec.drift.above,
      minPlans: spec.drift.minPlans ?? 20,
      windowMs,
      ...(spec.drift.notify === undefined ? {} : { notify: spec.drift.notify }),
    };
  }
  return { drift, editWindowMs };
}

/**
 * Whom an agent's drift alarm goes to, now: its `notify` (a group's members, or the ids given), else
 * its first escalation level (that level's channel, else its people), else the agent's channel.
 */
export function driftTargets(
  config: Pick<CountersignConfig, 'agents' | 'drift' | 'groups' | 'escalation'>,
  agent: string,
): string[] {
  const notify = config.drift[agent]?.notify;
  if (typeof notify === 'string') return [...(config.groups[notify] ?? [])];
  if (notify !== undefined) return [...notify];
  const first = config.escalation[agent]?.levels[0];
  if (first?.channel !== undefined) return [first.channel];
  if (first !== undefined && first.notify.length > 0) return [...first.notify];
  const channel = config.agents[agent]?.channel;
  return channel === undefined ? [] : [channel];
}
