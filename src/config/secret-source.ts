/** A secret given inline (tests, local demo) or read from an environment variable at start. */
export type SecretSource = string | { readonly env: string };

/**
 * Resolves an agent's secret from config or the environment; undefined when the variable is unset or
 * empty (`FREIGHT_AGENT_SECRET=` in a compose file must not become an empty HMAC key).
 */
export function resolveSecret(
  source: SecretSource,
  env: Readonly<Record<string, string | undefined>>,
): string | undefined {
  const secret = typeof source === 'string' ? source : env[source.env];
  return secret === '' ? undefined : secret;
}
