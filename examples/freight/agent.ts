/**
 * A sample freight agent: submits the plan for ticket #74991, waits for people to decide in Slack,
 * and executes what was approved — each step verified against the signed decision right before its
 * effect, and claimed with `reportOutcome('applying')` so it never runs twice.
 *
 *   REDIS_URL=redis://127.0.0.1:6379 FREIGHT_AGENT_SECRET=… npx tsx examples/freight/agent.ts
 *
 * (`COUNTERSIGN_PREFIX` selects a key prefix other than `cs`, as the server was configured.)
 *
 * Importing this file does nothing; `runFreightAgent` is what the demo and the tests call.
 */
import { pathToFileURL } from 'node:url';
import { AgentClient, type Decision, isDecisionTimeoutError } from '../../src/client/index.ts';
import { FREIGHT_AGENT, freightContext, freightSteps, freightSummary } from './plans.ts';

/** The executor's side of each tool. Here it prints; a real agent calls the freight systems. */
async function execute(step: { tool: string; args: Record<string, unknown> }, log: (line: string) => void) {
  log(`    → ${step.tool}(${JSON.stringify(step.args)})`);
}

export interface FreightAgentOptions {
  readonly log?: (line: string) => void;
  /** How long to wait for people to decide (default 1 hour). */
  readonly timeoutMs?: number;
  /** Called with the run id once submitted (the demo uses it to point at the card). */
  readonly onSubmitted?: (runId: string) => void;
}

/**
 * Submits the freight plan, awaits the decision and executes the approved steps. Returns the decision
 * and the ids of the steps it executed.
 * @example
 * const client = new AgentClient({ redisUrl, agent: 'freight-ops', secret });
 * const { decision, executed } = await runFreightAgent(client);
 */
export async function runFreightAgent(
  client: AgentClient,
  options: FreightAgentOptions = {},
): Promise<{ decision: Decision; executed: string[] }> {
  const log = options.log ?? console.log;
  const { runId } = await client.submit({
    summary: freightSummary,
    context: freightContext,
    steps: freightSteps.map((step) => ({ id: step.id, tool: step.tool, args: { ...step.args } })),
    expiresIn: '2h',
  });
  log(`submitted run ${runId}; waiting for a decision in Slack…`);
  options.onSubmitted?.(runId);

  const decision = await client.waitForDecision(runId, { timeoutMs: options.timeoutMs ?? 3_600_000 });
  log(`decision: ${decision.status}${decision.decidedBy ? ` by ${decision.decidedBy}` : ''}`);
  if (decision.status !== 'approved' || decision.plan === null) {
    if (decision.reason) log(`  reason: ${decision.reason}`);
    for (const diagnostic of decision.diagnostics) log(`  ${diagnostic.code}: ${diagnostic.message}`);
    return { decision, executed: [] };
  }

  const executed: string[] = [];
  // The approved plan, which may differ from what was submitted: people can edit it.
  for (const step of decision.plan.steps) {
    const check = client.verifyStep(decision, step);
    if (!check.ok) {
      log(`  ✗ ${step.id}: not executing (${check.reason}: ${check.message})`);
      break; // later steps may depend on this one
    }
    const claim = await client.reportOutcome(runId, step.id, { status: 'applying' });
    if (!claim.ok) {
      log(`  ↷ ${step.id}: ${claim.message}`);
      continue;
    }
    log(`  ✓ ${step.id} verified (digest ${step.digest.slice(0, 12)}…), executing`);
    try {
      await execute(step, log);
      await client.reportOutcome(runId, step.id, { status: 'applied' });
      executed.push(step.id);
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      await client.reportOutcome(runId, step.id, { status: 'failed', detail });
      log(`  ✗ ${step.id} failed: ${detail}`);
      break;
    }
  }
  return { decision, executed };
}

async function main(): Promise<void> {
  const secret = process.env.FREIGHT_AGENT_SECRET;
  if (!secret) {
    console.error(
      'set FREIGHT_AGENT_SECRET to the freight-ops agent’s secret (as in the Countersign config)',
    );
    process.exitCode = 2;
    return;
  }
  const client = new AgentClient({
    redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    agent: FREIGHT_AGENT,
    secret,
    ...(process.env.COUNTERSIGN_PREFIX ? { prefix: process.env.COUNTERSIGN_PREFIX } : {}),
  });
  try {
    await runFreightAgent(client);
  } catch (error) {
    if (!isDecisionTimeoutError(error)) throw error;
    console.error(error.message);
    process.exitCode = 1;
  } finally {
    await client.close();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
