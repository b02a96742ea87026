/**
 * Posts each agent's drift alarm (issue 20) when approvals says it was raised: after each edit, and on
 * a sweep (the window slides, a process may have died between raising and posting). The rule and its
 * state are answered by approvals (src/approvals/edit-window.ts); this only renders and posts, once:
 * a post is claimed first, and marked posted after Slack answered.
 */

import { buildDriftAlarm } from '../../views/drift-alarm.ts';
import type { EditWindow } from '../approvals/edit-window.ts';
import type { CountersignConfig } from '../config/index.ts';
import { driftTargets } from '../config/index.ts';
import type { ErrorReporter } from '../log.ts';
import type { CardLinkCache } from './app-home.ts';
import type { SlackGateway } from './slack-gateway.ts';

export interface DriftWatchDeps {
  readonly window: Pick<EditWindow, 'evaluate' | 'claimAlarmPost' | 'alarmPosted'>;
  readonly config: Pick<CountersignConfig, 'agents' | 'drift' | 'groups' | 'escalation'>;
  readonly gateway: Pick<SlackGateway, 'notice' | 'openDm'>;
  readonly links: Pick<CardLinkCache, 'linksOf'>;
  /** Redis's time (ms). */
  readonly now: () => Promise<number>;
  readonly onError: ErrorReporter;
}

export class DriftWatch {
  constructor(private readonly deps: DriftWatchDeps) {}

  /** Every agent with a drift alarm. */
  async sweep(): Promise<void> {
    for (const agent of Object.keys(this.deps.config.drift)) {
      try {
        await this.check(agent);
      } catch (error) {
        this.deps.onError(error, `checking the drift alarm of agent ${agent}`, { agent });
      }
    }
  }

  /** Evaluates one agent's alarm and posts it if it is raised and not posted yet. Returns whether it posted. */
  async check(agent: string): Promise<boolean> {
    const rule = this.deps.config.drift[agent];
    if (rule === undefined) return false;
    const now = await this.deps.now();
    const answer = await this.deps.window.evaluate(agent, rule, now);
    const raised = answer.kind === 'raised' || (answer.kind === 'steady' && answer.raised);
    if (!raised || !(await this.deps.window.claimAlarmPost(agent, now))) return false;
    const links = await this.deps.links.linksOf(answer.stats.mostEdited.map((run) => run.runId));
    const message = buildDriftAlarm({ stats: answer.stats, rule, links });
    for (const target of driftTargets(this.deps.config, agent)) {
      const channel = /^[UW]/.test(target) ? await this.deps.gateway.openDm([target]) : target;
      await this.deps.gateway.notice(channel, message);
    }
    await this.deps.window.alarmPosted(agent);
    return true;
  }
}
