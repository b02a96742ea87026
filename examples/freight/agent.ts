/**
 * A sample freight agent: submits the plan for ticket #74991 to Countersign over HTTP, waits for
 * people to decide in Slack, and executes what was approved — each step verified against
 * Countersign's signed decision right before its effect — the target each step was approved against
 * read again from the freight systems (here the example dataset), so a step whose delivery or invoice
 * changed since approval is refused (`world_changed`) — and claimed with `reportOutcome('applying')`
 * so it never runs twice. It holds its secret, which only signs its requests, and no Redis credentials.
 *
 *   COUNTERSIGN_URL=http://127.0.0.1:3000 FREIGHT_AGENT_SECRET=… npx tsx examples/freight/agent.ts
 *   … npx tsx examples/freight/agent.ts --change-world   a dispatcher moves the delivery after approval
 *
 * Importing this file does nothing; `runFreightAgent` is what the demo and the tests call.
 */
import { pathToFileURL } from 'node:url';
import {
  AgentClient,
  type Decision,
  isDecisionTimeoutError,
  isRequestError,
  isSubmissionError,
  type ReadVersion,
} from '../../src/client/index.ts';
import { changeDelivery, deliveries, versionOf } from './data.ts';
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
  /** How long people have to decide (default `'2h'`). */
  readonly expiresIn?: string;
  /** Reads an entity's version now, right before each effect (default: the example dataset's). */
  readonly readVersion?: ReadVersion;
  /** Called with an approved decision before anything runs (the demo changes the world here). */
  readonly afterApproval?: (decision: Decision) => void | Promise<void>;
}

/**
 * A dispatcher moves delivery dl_55120 in the freight system after the plan was approved: the world
 * the approvers saw is gone, and the reschedule must be refused. Returns the line to print.
 * @example afterApproval: () => console.log(moveDeliveryAfterApproval())
 */
export function moveDeliveryAfterApproval(): string {
  const before = deliveries.get('dl_55120');
  const after = changeDelivery('dl_55120', { date: '2026-04-07' });
  return `a dispatcher moved delivery dl_55120 to ${after.date} after the approval (version ${before?.version} → ${after.version})`;
}

/**
 * Submits the freight plan, awaits the decision and executes the approved steps. Returns the decision
 * and the ids of the steps it executed. A plan Countersign refuses throws `SubmissionError`.
 * @example
 * const client = new AgentClient({ url: 'http://127.0.0.1:3000', agent: 'freight-ops', secret });
 * const { decision, executed } = await runFreightAgent(client);
 */
export async function runFreightAgent(
  client: AgentClient,
  options: FreightAgentOptions = {},
): Promise<{ decision: Decision; executed: string[] }> {
  const log = options.log ?? console.log;
  const { runId, status } = await client.submit({
    summary: freightSummary,
    context: freightContext,
    steps: freightSteps.map((step) => ({ id: step.id, tool: step.tool, args: { ...step.args } })),
    expiresIn: options.expiresIn ?? '2h',
  });
  log(
    status === 'approved'
      ? `submitted run ${runId}; approved by policy`
      : `submitted run ${runId}; waiting for a decision in Slack…`,
  );
  options.onSubmitted?.(runId);

  const decision = await client.waitForDecision(runId, { timeoutMs: options.timeoutMs ?? 3_600_000 });
  log(`decision: ${decision.status}${decision.decidedBy ? ` by ${decision.decidedBy}` : ''}`);
  if (decision.status !== 'approved' || decision.plan === null) {
    if (decision.reason) log(`  reason: ${decision.reason}`);
    for (const diagnostic of decision.diagnostics) log(`  ${diagnostic.code}: ${diagnostic.message}`);
    return { decision, executed: [] };
  }

  await options.afterApproval?.(decision);
  const executed: string[] = [];
  const readVersion = options.readVersion ?? versionOf;
  // The approved plan, which may differ from what was submitted: people can edit it.
  for (const step of decision.plan.steps) {
    // Right before the effect: the receipt, the step, its dependencies, and the world it was approved in.
    const check = await client.verifyStep(decision, step, { readVersion });
    if (!check.ok) {
      log(`  ✗ ${step.id}: not executing (${check.reason}: ${check.message})`);
      if (check.reason === 'world_changed')
        log('    submit the plan again so people approve the world as it is now');
      break; // later steps may depend on this one
    }
    const claim = await client.reportOutcome(runId, step.id, { status: 'applying' });
    if (!claim.ok) {
      // Claimed before (a second run of this agent), or the run is no longer approved: never run twice.
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
    url: process.env.COUNTERSIGN_URL ?? 'http://127.0.0.1:3000',
    agent: FREIGHT_AGENT,
    secret,
  });
  const changeWorld = process.argv.includes('--change-world');
  try {
    await runFreightAgent(client, {
      ...(changeWorld ? { afterApproval: () => console.log(moveDeliveryAfterApproval()) } : {}),
    });
  } catch (error) {
    // Refused, undecided in time, or Countersign unreachable: say so; anything else is a bug.
    if (!isSubmissionError(error) && !isDecisionTimeoutError(error) && !isRequestError(error)) throw error;
    console.error(error.message);
    process.exitCode = 1;
  } finally {
    await client.close();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
