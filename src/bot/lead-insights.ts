/**
 * What the App Home shows an agent's leads about how people edit its plans (issue 20): the edit
 * window's figures, whether the drift alarm is raised, and the edits that recur. Leads are the people
 * an agent's escalation levels or drift alarm notify. Read from approvals and kept a minute per agent,
 * so publishing homes does not read journals each time.
 */

import type { LeadSummary } from '../../views/app-home.ts';
import type { EditWindow } from '../approvals/edit-window.ts';
import type { CountersignConfig } from '../config/index.ts';
import { driftTargets } from '../config/index.ts';

export interface LeadInsightsDeps {
  readonly window: Pick<EditWindow, 'stats' | 'alarmRaised' | 'recurring'>;
  readonly config: Pick<CountersignConfig, 'agents' | 'drift' | 'groups' | 'escalation'>;
  /** Redis's time (ms). */
  readonly now: () => Promise<number>;
  /** How long an agent's summary is reused (default 60 s). */
  readonly ttlMs?: number;
}

/** Recurring edits shown per agent on the Home tab. */
const SHOWN_RECURRING = 3;

export class LeadInsights {
  private readonly cache = new Map<string, { at: number; summary: Promise<LeadSummary> }>();

  constructor(private readonly deps: LeadInsightsDeps) {}

  /** The people who lead `agent`: whom its escalation levels and its drift alarm notify. */
  leadsOf(agent: string): Set<string> {
    const { config } = this.deps;
    const levels = config.escalation[agent]?.levels ?? [];
    const people = [
      ...levels.flatMap((level) => level.notify),
      ...(config.drift[agent] === undefined ? [] : driftTargets(config, agent)),
    ];
    return new Set(people.filter((id) => /^[UW]/.test(id)));
  }

  /** A summary for each agent `userId` leads (none for everyone else). */
  async forUser(userId: string): Promise<LeadSummary[]> {
    const agents = Object.keys(this.deps.config.agents).filter((agent) => this.leadsOf(agent).has(userId));
    return Promise.all(agents.map((agent) => this.summary(agent)));
  }

  private summary(agent: string): Promise<LeadSummary> {
    const cached = this.cache.get(agent);
    const wall = Date.now();
    if (cached !== undefined && wall - cached.at < (this.deps.ttlMs ?? 60_000)) return cached.summary;
    const summary = (async () => {
      const now = await this.deps.now();
      const [stats, alarm, recurring] = await Promise.all([
        this.deps.window.stats(agent, now),
        this.deps.window.alarmRaised(agent),
        this.deps.window.recurring(agent, now),
      ]);
      return { stats, alarm, recurring: recurring.slice(0, SHOWN_RECURRING) };
    })();
    // A failed read is not kept: the next publish asks again.
    summary.catch(() => this.cache.delete(agent));
    this.cache.set(agent, { at: wall, summary });
    return summary;
  }
}
