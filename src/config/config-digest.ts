/** The config digest decisions record: which policy a decision was made under. */
import { z } from 'zod';
import { canonicalJson, sha256Hex } from '../pipeline/canonical-json.ts';
import type { ChangeMatcher } from '../pipeline/change-matcher.ts';
import { parseDuration } from '../pipeline/duration.ts';
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
        // Only when present: tools without them keep the digest they had.
        ...(tool.annotate === undefined ? {} : { annotate: source(tool.annotate) }),
        ...(tool.preview === undefined ? {} : { preview: source(tool.preview) }),
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
        ...(policyRule.changes === undefined ? {} : { changes: changesDigestPart(policyRule.changes) }),
      })),
      ...(input.internalTools === undefined || input.internalTools.length === 0
        ? {}
        : { internalTools: [...input.internalTools].sort() }),
      // What an escalation lets people approve decides approvals as much as the groups do; a level that
      // only notifies decides nothing, and leaves the digest as it was.
      ...escalationGrantsDigestPart(input.escalation),
      ...hookDefaultsDigestPart(input.defaults),
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

/** A change-set matcher as JSON, lists as written. */
function changesDigestPart(changes: ChangeMatcher): JsonValue {
  return {
    ...(changes.paths === undefined ? {} : { paths: [...changes.paths] }),
    ...(changes.entityTypes === undefined ? {} : { entityTypes: [...changes.entityTypes] }),
    ...(changes.violated === undefined
      ? {}
      : { violated: changes.violated === true ? true : [...changes.violated] }),
    ...(changes.unknownImpact === undefined ? {} : { unknownImpact: true }),
  };
}

/**
 * The hooks' budget (it decides whether a slow hook leaves its step unverified) and who reviews such
 * steps, in ms and by name — only when set, so configs that do not set them keep their digest.
 */
function hookDefaultsDigestPart(defaults: ConfigInput['defaults']): Record<string, JsonValue> {
  const timeoutMs = defaults?.hookTimeout === undefined ? undefined : parseDuration(defaults.hookTimeout);
  return {
    ...(timeoutMs === undefined ? {} : { hookTimeoutMs: timeoutMs }),
    ...(defaults?.unverifiedApprovers === undefined
      ? {}
      : { unverifiedApprovers: defaults.unverifiedApprovers }),
  };
}
