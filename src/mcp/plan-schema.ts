/**
 * The JSON Schema of `submit_plan`'s input, generated from the deployment's tool registry: each
 * step is one branch of a union keyed on `tool`, whose `args` is that tool's own zod schema as JSON
 * Schema — so a model sees the real argument types (integers in cents, ISO dates, length limits)
 * instead of a free-form object. The server still validates everything: this only informs the model.
 */
import { z } from 'zod';
import type { ToolDefinition } from '../pipeline/index.ts';

export type JsonSchema = { readonly [key: string]: unknown };

const EFFECT_TEXT: Record<ToolDefinition['effect'], string> = {
  read: 'reads only',
  write: 'changes data',
  irreversible: 'irreversible',
};

/** One tool's args as JSON Schema (the input side: what the agent must send), without `$schema`. */
export function argsJsonSchema(tool: ToolDefinition): JsonSchema {
  const { $schema: _schema, ...schema } = z.toJSONSchema(tool.args, {
    io: 'input',
    unrepresentable: 'any',
  }) as Record<string, unknown>;
  return schema;
}

/** One step of `tool`: `{ id?, tool: <name>, args }`. */
function stepSchema(tool: ToolDefinition): JsonSchema {
  return {
    type: 'object',
    title: tool.name,
    description: `${tool.title} (${EFFECT_TEXT[tool.effect]})`,
    properties: {
      id: { type: 'string', description: 'Stable step id (s1, s2, …); assigned when left out' },
      tool: { type: 'string', const: tool.name },
      args: argsJsonSchema(tool),
    },
    required: ['tool', 'args'],
    additionalProperties: false,
  };
}

/**
 * `submit_plan`'s input schema for an agent allowed `toolNames` (in that order; names the registry
 * does not hold are left out, the server would refuse them).
 */
export function submitPlanInputSchema(
  registry: ReadonlyMap<string, ToolDefinition>,
  toolNames: readonly string[],
): JsonSchema {
  const tools = toolNames.flatMap((name) => {
    const tool = registry.get(name);
    return tool === undefined ? [] : [tool];
  });
  return {
    type: 'object',
    properties: {
      summary: { type: 'string', description: 'One line for the people approving the plan' },
      context: {
        type: 'object',
        description: 'Facts the tools’ checks may cross-reference, e.g. { "ticket_id": "74991" }',
      },
      steps: {
        type: 'array',
        minItems: 1,
        description: 'The tool calls to approve, in order. None of them has run yet.',
        items: { oneOf: tools.map(stepSchema) },
      },
      expires_in: {
        type: 'string',
        description: 'How long the plan stays open, e.g. "2h" (default: the server’s)',
      },
    },
    required: ['steps'],
    additionalProperties: false,
  };
}
