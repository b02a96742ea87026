/**
 * People's display names for the views (users.info through the Slack gateway), cached per process:
 * an hour for a name, a minute for a person Slack gave no name for (the views then show a mention,
 * which Slack draws as the name).
 */
import { type PeopleNames, peopleShown } from '../../views/index.ts';
import type { RunView } from '../approvals/index.ts';
import type { SlackGateway } from './slack-gateway.ts';

const NAME_TTL_MS = 60 * 60_000;
const NO_NAME_TTL_MS = 60_000;

export class PeopleNameCache {
  /** Names by user id, with when each was looked up. */
  private readonly names = new Map<string, { readonly name: string | undefined; readonly at: number }>();

  constructor(
    private readonly deps: {
      readonly gateway: Pick<SlackGateway, 'personName'>;
      readonly clock: () => number;
    },
  ) {}

  /** Names of everyone the run's messages may name — who may act, who approved, who wrote a step. */
  async namesOf(run: RunView): Promise<PeopleNames> {
    const ids = new Set(peopleShown(run));
    for (const standing of Object.values(run.standing)) for (const id of standing.approvers) ids.add(id);
    for (const provenance of Object.values(run.current.provenance))
      if (provenance.by === 'user') ids.add(provenance.userId);
    if (run.current.createdBy !== 'agent') ids.add(run.current.createdBy);
    const now = this.deps.clock();
    const names: Record<string, string> = {};
    for (const id of ids) {
      let known = this.names.get(id);
      const ttl = known?.name === undefined ? NO_NAME_TTL_MS : NAME_TTL_MS;
      if (known === undefined || now - known.at > ttl) {
        known = { name: await this.deps.gateway.personName(id), at: now };
        this.names.set(id, known);
      }
      if (known.name !== undefined) names[id] = known.name;
    }
    return names;
  }
}
