/** Fields and values in the report in the tool's terms: the form's labels, money as money. */
import {
  fieldAt,
  fieldLabel,
  formatMoney,
  type JsonValue,
  type ToolDefinition,
  valueKindOf,
} from '../../pipeline/index.ts';
import { type FieldDescriber, JSON_FIELDS } from './edit-patterns.ts';

/** Labels and money from the tools' argument schemas; anything unknown as a path and JSON. */
export function toolFields(tools: readonly ToolDefinition[]): FieldDescriber {
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const schemaAt = (tool: string, path: readonly (string | number)[]) => {
    const definition = byName.get(tool);
    return definition === undefined ? undefined : fieldAt(definition.args, path);
  };
  return {
    label(tool, path) {
      const schema = schemaAt(tool, path);
      const key = path.at(-1);
      return schema === undefined || typeof key !== 'string'
        ? JSON_FIELDS.label(tool, path)
        : fieldLabel(schema, key);
    },
    value(tool, path, value: JsonValue) {
      const kind = valueKindOf(schemaAt(tool, path));
      if (kind.kind === 'money' && typeof value === 'number')
        return formatMoney(value, kind.currency ?? 'USD');
      return JSON_FIELDS.value(tool, path, value);
    },
  };
}
