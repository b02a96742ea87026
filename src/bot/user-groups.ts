/**
 * Approver groups configured as Slack user groups (`groups: { finance: { usergroup: 'S0FIN' } }`): their
 * members are read with `usergroups.users.list` at start and every `refreshEveryMs` after, and written
 * into the config's member list of that group in place — the one list approvals, the pipeline and
 * escalation levels read (the pipeline stays pure: it is handed the resolved membership).
 *
 * At start a user group Slack refuses for good (unknown, or the token lacks `usergroups:read`) stops
 * Countersign with what and why; a Slack that cannot be reached leaves the group empty — nobody counts
 * as its member, so nothing is approved on a guess — and is said once, then retried. A refresh that
 * fails keeps the last known members.
 */
import { ErrorCode, type WebAPIPlatformError } from '@slack/web-api';
import type { CountersignConfig } from '../config/index.ts';
import type { Logger } from '../log.ts';
import { CountersignError } from '../pipeline/index.ts';

/** Reads a user group's members (the Slack gateway's `usergroupMembers`). */
export type UsergroupReader = (usergroup: string) => Promise<readonly string[]>;

/** Slack answers that no retry will change. */
const PERMANENT = new Set([
  'no_such_subteam',
  'missing_scope',
  'not_allowed_token_type',
  'invalid_auth',
  'not_authed',
  'account_inactive',
  'token_revoked',
  'invalid_arguments',
]);

/** The Slack error code of a refusal no retry will change, else undefined (unreachable, 5xx, 429…). */
function permanentRefusal(error: unknown): string | undefined {
  if (!(error instanceof Error) || (error as { code?: unknown }).code !== ErrorCode.PlatformError)
    return undefined;
  const code = (error as WebAPIPlatformError).data.error;
  return PERMANENT.has(code) ? code : undefined;
}

function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export class UserGroupDirectory {
  /** Groups whose members were read at least once. */
  private readonly known = new Set<string>();

  constructor(
    private readonly deps: {
      readonly config: Pick<CountersignConfig, 'groups' | 'usergroups'>;
      readonly read: UsergroupReader;
      readonly logger: Pick<Logger, 'warn' | 'info'>;
    },
  ) {}

  /** Whether any group is read from Slack. */
  get active(): boolean {
    return Object.keys(this.deps.config.usergroups).length > 0;
  }

  /**
   * Reads every user group once. Throws `CountersignError` (`config_invalid`) naming the group when
   * Slack refuses one for good; a group Slack cannot be reached for stays empty and is logged.
   */
  async start(): Promise<void> {
    const refused: string[] = [];
    await this.readAll((name, usergroup, error) => {
      const code = permanentRefusal(error);
      if (code !== undefined) {
        refused.push(`group ${name}: Slack refused user group ${usergroup} (${code})${hint(code)}`);
        return;
      }
      this.deps.logger.warn(
        { group: name, usergroup, err: error },
        `Slack user group ${usergroup} (group ${name}) could not be read at start (${reason(error)}): nobody counts as a member of ${name} until it is; retrying`,
      );
    });
    if (refused.length > 0)
      throw new CountersignError(
        'invalid_config',
        `Countersign cannot read the approver groups it is configured to take from Slack:\n  ${refused.join('\n  ')}`,
      );
  }

  /** Reads every user group again; a group that fails keeps its last known members (logged). */
  async refresh(): Promise<void> {
    await this.readAll((name, usergroup, error) => {
      const kept = this.known.has(name) ? 'keeping its last known members' : 'it stays empty';
      this.deps.logger.warn(
        { group: name, usergroup, err: error },
        `Slack user group ${usergroup} (group ${name}) could not be refreshed (${reason(error)}): ${kept}`,
      );
    });
  }

  private async readAll(failed: (name: string, usergroup: string, error: unknown) => void): Promise<void> {
    await Promise.all(
      Object.entries(this.deps.config.usergroups).map(async ([name, usergroup]) => {
        try {
          const members = await this.deps.read(usergroup);
          const wasUnknown = !this.known.has(name);
          this.replace(name, members);
          this.known.add(name);
          if (wasUnknown)
            this.deps.logger.info(
              { group: name, usergroup, members: members.length },
              `group ${name} read from Slack user group ${usergroup}`,
            );
        } catch (error) {
          failed(name, usergroup, error);
        }
      }),
    );
  }

  /** Writes the members into the group's shared list (see CountersignConfig.groups). */
  private replace(name: string, members: readonly string[]): void {
    const list = this.deps.config.groups[name] as string[] | undefined;
    if (list === undefined) return;
    list.splice(0, list.length, ...new Set(members));
  }
}

function hint(code: string): string {
  switch (code) {
    case 'no_such_subteam':
      return ': no such user group in this workspace — check the id in the config';
    case 'missing_scope':
      return ': the app needs the usergroups:read scope (manifest.json) — reinstall it';
    default:
      return ': check SLACK_BOT_TOKEN';
  }
}
