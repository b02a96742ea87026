/** The config digest decisions record: which policy a decision was made under. */
import { z } from 'zod';
import { canonicalJson, sha256Hex } from '../pipeline/canonical-json.ts';
import { fieldRegistry } from '../pipeline/fields.ts';
import type { JsonValue } from '../pipeline/json.ts';
import { ruleName } from '../pipeline/policy.ts';
import type { ConfigInput } from './config-types.ts';

/** Digest over everything that decides a route or a check, including hook sources. */
export function configDigest(input: ConfigInput): string {
  const source = (fn: unknown) => (typeof fn === 'function' ? fn.toString() : null);
  return sha256Hex(
    canonicalJson({
      tools: input.tools.map((tool) => ({
        name: tool.name,
        effect: tool.effect,
        // With field metadata, so a money field's currency is part of what was approved under.
        args: JSON.stringify(z.toJSONSchema(tool.args, { unrepresentable: 'any', metadata: fieldRegistry })),
        checks: source(tool.checks),
      })),
      agents: Object.fromEntries(Object.entries(input.agents).map(([name, spec]) => [name, [...spec.tools]])),
      // A Slack user group is digested by its id: its members change without a config change.
      groups: Object.fromEntries(
        Object.entries(input.groups).map(([name, group]) => [
          name,
          'usergroup' in group ? { usergroup: group.usergroup } : [...group],
        ]),
      ),
      policy: input.policy.map((policyRule, index) => ({
        name: ruleName(policyRule, index),
        tool: typeof policyRule.tool === 'string' ? policyRule.tool : [...policyRule.tool],
        when: source(policyRule.when),
        route: policyRule.route,
        approvers: policyRule.approvers ?? null,
        approvals: policyRule.approvals ?? 1,
        distinctFromAuthor: policyRule.distinctFromAuthor ?? false,
        // Only when set: configs that do not use it keep the digest they had.
        ...(policyRule.escalatedMayApprove === false ? { escalatedMayApprove: false } : {}),
        ...(policyRule.continue === true ? { continue: true } : {}),
      })),
      ...(input.internalTools === undefined || input.internalTools.length === 0
        ? {}
        : { internalTools: [...input.internalTools].sort() }),
      // What an escalation lets people approve decides approvals as much as the groups do; a level that
      // only notifies decides nothing, and leaves the digest as it was.
      ...escalationGrantsDigestPart(input.escalation),
      authoring: Object.fromEntries(
        Object.entries(input.authoring).map(([group, tools]) => [group, tools === '*' ? '*' : [...tools]]),
      ),
    }),
  );
}

/** The escalation grants, for the config digest: `{}` when no level grants anything. */
function escalationGrantsDigestPart(escalation: ConfigInput['escalation']): { escalation?: JsonValue } {
  const grants = Object.entries(escalation ?? {}).flatMap(([agent, spec]) =>
    spec.levels.flatMap((level, index) =>
      level.may === undefined
        ? []
        : [
            {
              agent,
              level: index + 1,
              notify: typeof level.notify === 'string' ? level.notify : [...level.notify],
              approve: level.may.approve === '*' ? '*' : [...level.may.approve],
              counts: level.may.counts ?? 'member',
              irreversible: level.may.irreversible ?? false,
            },
          ],
    ),
  );
  return grants.length === 0 ? {} : { escalation: grants };
}
