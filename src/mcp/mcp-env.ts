/** What `npm run mcp` reads from its environment: which Countersign, as which agent, with which tools. */
import { parseDuration } from '../config/duration.ts';

export interface McpSettings {
  /** Countersign's base URL (`COUNTERSIGN_URL`). */
  readonly url: string;
  /** The agent's name in the config (`COUNTERSIGN_AGENT`). */
  readonly agent: string;
  /** The agent's secret (`COUNTERSIGN_AGENT_SECRET`). */
  readonly secret: string;
  /** The deployment's config file, for its tool registry (`COUNTERSIGN_CONFIG`); empty for the gateway. */
  readonly configPath: string;
  /** How long a gateway call waits for people (`COUNTERSIGN_GATEWAY_WAIT`, default 10m). */
  readonly gatewayWaitMs: number;
}

/** The MCP server needs the config's tool registry; the gateway does not (the server's policy decides). */
export type McpMode = 'server' | 'gateway';

export type McpSettingsResult =
  | { readonly ok: true; readonly settings: McpSettings }
  | { readonly ok: false; readonly problems: readonly string[] };

const DEFAULT_GATEWAY_WAIT_MS = 10 * 60_000;

const VARIABLES = {
  url: ['COUNTERSIGN_URL', "Countersign's base URL, e.g. http://127.0.0.1:3000"],
  agent: ['COUNTERSIGN_AGENT', "the agent's name in the config, e.g. freight-ops"],
  secret: ['COUNTERSIGN_AGENT_SECRET', "that agent's secret from the config"],
  configPath: ['COUNTERSIGN_CONFIG', 'the config file, e.g. examples/freight/countersign.config.ts'],
} as const;
type Variable = keyof typeof VARIABLES;

/** Reads the settings from `source` (the process environment at the edge); every missing one is named. */
export function readMcpSettings(
  source: Readonly<Record<string, string | undefined>>,
  mode: McpMode = 'server',
): McpSettingsResult {
  const problems: string[] = [];
  const values: Partial<Record<Variable, string>> = {};
  for (const [key, [name, what]] of Object.entries(VARIABLES) as [Variable, readonly [string, string]][]) {
    const value = source[name]?.trim();
    if (value !== undefined && value !== '') values[key] = value;
    else if (key !== 'configPath' || mode === 'server') problems.push(`${name} is not set: ${what}`);
  }
  if (values.url !== undefined && !URL.canParse(values.url)) {
    problems.push(
      `COUNTERSIGN_URL must be a URL such as http://127.0.0.1:3000 (got ${JSON.stringify(values.url)})`,
    );
  }
  const waitText = source.COUNTERSIGN_GATEWAY_WAIT?.trim() || undefined;
  const gatewayWaitMs = waitText === undefined ? DEFAULT_GATEWAY_WAIT_MS : parseDuration(waitText);
  if (gatewayWaitMs === undefined || gatewayWaitMs < 1000) {
    problems.push(
      `COUNTERSIGN_GATEWAY_WAIT must be a duration of 1s or more, such as 10m (got ${JSON.stringify(waitText)})`,
    );
  }
  const { url, agent, secret, configPath = '' } = values;
  if (problems.length > 0 || url === undefined || agent === undefined || secret === undefined) {
    return { ok: false, problems };
  }
  return { ok: true, settings: { url, agent, secret, configPath, gatewayWaitMs: gatewayWaitMs ?? 0 } };
}
