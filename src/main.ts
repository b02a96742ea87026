/**
 * Composition root. For now it loads and checks the environment and the configuration; the Slack bot,
 * queues and HTTP endpoints are wired here as their issues land (DESIGN.md §12).
 */
import { isConfigError } from './config/define-config.ts';
import { readEnv } from './config/env.ts';
import { loadConfig } from './config/load.ts';

const env = readEnv();
if (!env.ok) {
  console.error(`invalid environment:\n${env.problems.map((p) => `  - ${p}`).join('\n')}`);
  process.exit(1);
}
const path = env.env.COUNTERSIGN_CONFIG;
try {
  const config = await loadConfig(path);
  const tools = [...config.pipeline.tools.keys()].join(', ');
  console.log(`config ${path} is valid (digest ${config.digest.slice(0, 12)}…): tools ${tools}`);
  console.log('The Slack bot is not yet available: it lands with the Slack bot issue. See README.md.');
} catch (error) {
  if (!isConfigError(error)) throw error;
  console.error(error.message);
  process.exitCode = 1;
}
