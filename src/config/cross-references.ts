/**
 * The checks no schema can make: every tool, group and agent a config names is defined, and each
 * policy rule's route fits its settings. Problems are appended to the list they are given, so every
 * one is reported at once.
 */
import { type PolicyRule, ruleName } from '../pipeline/policy.ts';
import type { ConfigInput } from './config-types.ts';

/** Record a problem when a name is used but not defined; `where` says where it was used. */
export interface NameChecks {
  readonly tool: (where: string, name: string) => void;
  /** True when the group is defined. */
  readonly group: (where: string, name: string) => boolean;
}

/** Name checks against the tools and groups `input` defines, recording into `problems`. */
export function nameChecks(input: ConfigInput, problems: string[]): NameChecks {
  const toolNames = new Set(input.tools.map((tool) => tool.name));
  const groupNames = new Set(Object.keys(input.groups));
  return {
    tool: (where, name) => {
      if (name !== '*' && !toolNames.has(name))
        problems.push(`${where}: unknown tool ${JSON.stringify(name)}`);
    },
    group: (where, name) => {
      const known = groupNames.has(name);
      if (!known) problems.push(`${where}: unknown group ${JSON.stringify(name)}`);
      return known;
    },
  };
}

/** Checks tool names, agents' tools, the policy and authoring, in that order. */
export function checkCrossReferences(input: ConfigInput, names: NameChecks, problems: string[]): void {
  const toolNames = new Set<string>();
  for (const tool of input.tools) {
    if (toolNames.has(tool.name)) problems.push(`tools: ${tool.name} is defined twice`);
    toolNames.add(tool.name);
  }
  for (const [agent, spec] of Object.entries(input.agents)) {
    for (const tool of spec.tools) {
      if (tool === '*') problems.push(`agents.${agent}.tools: list tools by name ('*' is not allowed here)`);
      else names.tool(`agents.${agent}.tools`, tool);
    }
  }
  input.policy.forEach((policyRule, index) => {
    checkPolicyRule(input, policyRule, index, names, problems);
  });
  for (const tool of input.internalTools ?? []) {
    names.tool('internalTools', tool);
    const effect = input.tools.find((candidate) => candidate.name === tool)?.effect;
    if (effect !== undefined && effect !== 'write') {
      problems.push(`internalTools: ${tool} is ${effect}; only write tools can be declared internal`);
    }
  }
  for (const [group, tools] of Object.entries(input.authoring)) {
    names.group('authoring', group);
    if (tools !== '*') for (const tool of tools) names.tool(`authoring.${group}`, tool);
  }
}

function checkPolicyRule(
  input: ConfigInput,
  policyRule: PolicyRule,
  index: number,
  names: NameChecks,
  problems: string[],
): void {
  const where = `policy[${index}] (${ruleName(policyRule, index)})`;
  for (const tool of typeof policyRule.tool === 'string' ? [policyRule.tool] : policyRule.tool)
    names.tool(where, tool);
  if (policyRule.continue === true) checkContinue(input, policyRule, where, problems);
  if (policyRule.route !== 'review') {
    if (policyRule.approvers !== undefined || policyRule.approvals !== undefined) {
      problems.push(`${where}: approvers/approvals only apply to route 'review'`);
    }
    if (policyRule.escalatedMayApprove !== undefined) {
      problems.push(`${where}: escalatedMayApprove only applies to route 'review'`);
    }
    return;
  }
  if (policyRule.approvers === undefined) {
    problems.push(`${where}: a review rule needs approvers (a group name)`);
    return;
  }
  const known = names.group(where, policyRule.approvers);
  // Approvals come from distinct people, so a member listed twice counts once.
  const group = input.groups[policyRule.approvers];
  // A Slack user group's size is known only once Slack answers: too few members then leave it unapprovable.
  if (group === undefined || 'usergroup' in group) return;
  const size = new Set(group).size;
  const needed = policyRule.approvals ?? 1;
  if (known && size < needed) {
    problems.push(
      `${where}: needs ${needed} approvals but group ${policyRule.approvers} has ${size} distinct member(s)`,
    );
  }
}

/**
 * A `continue` rule may cover only tools that are safe to run before the plan is decided: `read`, or
 * `write` declared internal. Checked against every tool the rule could match (`'*'` is all of them),
 * so whatever its `when` says at run time, it can never release an irreversible or outward write.
 */
function checkContinue(input: ConfigInput, policyRule: PolicyRule, where: string, problems: string[]): void {
  if (policyRule.route === 'block') {
    problems.push(`${where}: continue does not apply to route 'block'`);
    return;
  }
  const named = typeof policyRule.tool === 'string' ? [policyRule.tool] : policyRule.tool;
  const covered = named.includes('*') ? input.tools : input.tools.filter((tool) => named.includes(tool.name));
  const internal = new Set(input.internalTools ?? []);
  for (const tool of covered) {
    if (tool.effect === 'irreversible') {
      problems.push(`${where}: continue covers ${tool.name}, which is irreversible: it can never run early`);
    } else if (tool.effect === 'write' && !internal.has(tool.name)) {
      problems.push(
        `${where}: continue covers ${tool.name}, a write tool not declared internal (add it to internalTools if its effect stays inside your systems)`,
      );
    }
  }
}
