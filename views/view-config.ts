import type { CountersignConfig } from '../src/config/config-types.ts';
import type { ToolDefinition } from '../src/pipeline/index.ts';

/** The part of the configuration views read: tools (titles, argument schemas), groups, authoring. */
export type ViewConfig = Pick<CountersignConfig, 'pipeline'>;

/** A tool by name, or undefined if the config no longer has it. */
export function toolOf(config: ViewConfig, name: string): ToolDefinition | undefined {
  return config.pipeline.tools.get(name);
}
