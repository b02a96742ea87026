import { z } from 'zod';
import type { CountersignConfig } from './config-types.ts';
import { resolveSecret } from './secret-source.ts';

/** The process environment Countersign reads (docs/architecture.md §12). Only this module touches `process.env`. */
const envSchema = z.object({
  COUNTERSIGN_CONFIG: z.string().min(1).default('examples/freight/countersign.config.ts'),
  REDIS_URL: z
    .url({ protocol: /^rediss?$/, error: 'must be a redis:// or rediss:// URL' })
    .default('redis://127.0.0.1:6379'),
  SLACK_BOT_TOKEN: z.string().startsWith('xoxb-', 'must be a bot token (xoxb-…)').optional(),
  SLACK_SIGNING_SECRET: z.string().min(1).optional(),
  SLACK_APP_TOKEN: z.string().startsWith('xapp-', 'must be an app-level token (xapp-…)').optional(),
  SLACK_API_URL: z.url({ error: 'must be a URL such as http://127.0.0.1:3001/api/' }).optional(),
  PORT: z.coerce.number().int().min(0).max(65_535).default(3000),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
  /**
   * `1`: start on a Redis without persistence or with key eviction (the demo, tests). Otherwise such a
   * Redis is refused at start: it would lose runs and decisions.
   */
  COUNTERSIGN_ALLOW_VOLATILE_REDIS: z
    .enum(['0', '1', 'true', 'false'], { error: 'must be 1 or 0' })
    .optional()
    .transform((value) => value === '1' || value === 'true'),
  /** When set, `GET /metrics` needs `Authorization: Bearer <METRICS_TOKEN>`. */
  METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters (e.g. openssl rand -hex 24)').optional(),
  /** Key prefix in Redis (and of BullMQ's keys), so several deployments can share one Redis. */
  COUNTERSIGN_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,32}$/, 'letters, digits, - and _ only')
    .default('cs'),
  // Read by loadSigningKeys (signing-key.ts, docs/receipts.md); optional here so startup is unchanged until it is wired in.
  /** The Ed25519 private key (PKCS#8 PEM) that signs decision receipts; `\n` escapes are accepted. */
  COUNTERSIGN_SIGNING_KEY: z.string().optional(),
  /** A path to that PEM, instead of COUNTERSIGN_SIGNING_KEY. */
  COUNTERSIGN_SIGNING_KEY_FILE: z.string().optional(),
  /** PEM public keys or a JWKS: keys that signed receipts before a rotation, kept in the JWKS. */
  COUNTERSIGN_PREVIOUS_PUBLIC_KEYS_FILE: z.string().optional(),
});

export type Env = z.output<typeof envSchema>;

export type EnvResult = { ok: true; env: Env } | { ok: false; problems: string[] };

/** Parses an environment (default: this process's); problems name the variable and the fix. */
export function readEnv(source: Readonly<Record<string, string | undefined>> = process.env): EnvResult {
  const result = envSchema.safeParse(source);
  if (result.success) return { ok: true, env: result.data };
  return {
    ok: false,
    problems: result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`),
  };
}

/**
 * Resolves every agent's secret (inline, or `{ env: NAME }` from the environment). Missing variables
 * are reported by name, so the bot refuses to start instead of failing at the first decision.
 */
export function resolveAgentSecrets(
  config: CountersignConfig,
  source: Readonly<Record<string, string | undefined>> = process.env,
): { ok: true; secrets: Readonly<Record<string, string>> } | { ok: false; problems: string[] } {
  const secrets: Record<string, string> = {};
  const problems: string[] = [];
  for (const [agent, spec] of Object.entries(config.agents)) {
    const secret = resolveSecret(spec.secret, source);
    if (secret === undefined) {
      const name = typeof spec.secret === 'string' ? '' : spec.secret.env;
      problems.push(`agents.${agent}.secret: environment variable ${name} is not set`);
    } else {
      secrets[agent] = secret;
    }
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, secrets };
}
