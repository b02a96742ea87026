/** What `npm run mcp` reads from its environment: which Countersign, as which agent, with which tools. */

export interface McpSettings {
  /** Countersign's base URL (`COUNTERSIGN_URL`). */
  readonly url: string;
  /** The agent's name in the config (`COUNTERSIGN_AGENT`). */
  readonly agent: string;
  /** The agent's secret (`COUNTERSIGN_AGENT_SECRET`). */
  readonly secret: string;
  /** The deployment's config file, for its tool registry (`COUNTERSIGN_CONFIG`). */
  readonly configPath: string;
}

export type McpSettingsResult =
  | { readonly ok: true; readonly settings: McpSettings }
  | { readonly ok: false; readonly problems: readonly string[] };

const VARIABLES = {
  url: ['COUNTERSIGN_URL', "Countersign's base URL, e.g. http://127.0.0.1:3000"],
  agent: ['COUNTERSIGN_AGENT', "the agent's name in the config, e.g. freight-ops"],
  secret: ['COUNTERSIGN_AGENT_SECRET', "that agent's secret from the config"],
  configPath: ['COUNTERSIGN_CONFIG', 'the config file, e.g. examples/freight/countersign.config.ts'],
} as const satisfies Record<keyof McpSettings, readonly [string, string]>;

/** Reads the settings from `source` (the process environment at the edge); every missing one is named. */
export function readMcpSettings(source: Readonly<Record<string, string | undefined>>): McpSettingsResult {
  const problems: string[] = [];
  const values: Partial<Record<keyof McpSettings, string>> = {};
  for (const [key, [name, what]] of Object.entries(VARIABLES) as [
    keyof McpSettings,
    readonly [string, string],
  ][]) {
    const value = source[name]?.trim();
    if (value === undefined || value === '') problems.push(`${name} is not set: ${what}`);
    else values[key] = value;
  }
  if (values.url !== undefined && !URL.canParse(values.url)) {
    problems.push(
      `COUNTERSIGN_URL must be a URL such as http://127.0.0.1:3000 (got ${JSON.stringify(values.url)})`,
    );
  }
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, settings: values as McpSettings };
}
