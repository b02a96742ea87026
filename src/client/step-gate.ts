/**
 * The agent's gate in front of an effect (`AgentClient.verifyStep`): the pipeline's check of a
 * decision or release (`verifyDecisionStep`) with Countersign's keys — fetched again when a receipt
 * names a key not listed, as after a rotation — refused for a grant made out to another agent, and,
 * for a step with dependencies, the steps reported applied asked of Countersign (failing closed); and,
 * given `readVersion`, the step's preconditions against the world as it is now (`world_changed`).
 */
import {
  type Grant,
  isRelease,
  type JsonObject,
  type StepToRun,
  type StepVerification,
  verifyDecisionStep,
  verifyReceiptWith,
} from '../pipeline/index.ts';
import type { RunStatus } from './client-types.ts';
import type { ReceiptKeySource } from './receipt-keys.ts';
import { checkWorld, type ReadVersion } from './world-check.ts';

export interface StepGate {
  /** The agent this client speaks for. */
  readonly agent: string;
  readonly keySource: ReceiptKeySource;
  /** The run as Countersign has it (`GET /v1/runs/{id}`): its `applied` steps. */
  readonly getRun: (runId: string) => Promise<RunStatus>;
}

export async function verifyGrantStep(
  gate: StepGate,
  grant: Grant,
  step: StepToRun,
  now: number,
  readVersion?: ReadVersion,
): Promise<StepVerification> {
  const check = await verifySignedStep(gate, grant, step, now);
  // Last, and only for a step that passed everything else: the world as it is right now.
  if (!check.ok || readVersion === undefined) return check;
  const world = await checkWorld(check.preconditions, readVersion);
  return world.ok ? check : world;
}

async function verifySignedStep(
  gate: StepGate,
  grant: Grant,
  step: StepToRun,
  now: number,
): Promise<StepVerification> {
  let keys = await gate.keySource.keys();
  const { receipt, ...unsigned } = grant;
  const verified = verifyReceiptWith(unsigned as unknown as JsonObject, receipt, keys);
  if (!verified.ok && verified.reason === 'unknown_kid') {
    keys = (await gate.keySource.refreshForUnknownKid()) ?? keys;
  }
  const check = verifyDecisionStep(grant, step, keys, now);
  const agent = [grant.agent, grant.plan?.agent].find((name) => name !== gate.agent);
  if (agent !== undefined && (check.ok || check.reason === 'dependency_not_applied')) {
    // Countersign's keys sign every agent's decisions: one approved for another agent approves nothing here.
    const what = isRelease(grant) ? 'release' : 'decision';
    return {
      ok: false,
      reason: isRelease(grant) ? 'not_released' : 'not_approved',
      message: `the ${what} is for agent ${JSON.stringify(agent)}: it ${isRelease(grant) ? 'releases' : 'approves'} nothing for ${JSON.stringify(gate.agent)}`,
    };
  }
  // Every other check passed and only dependencies are left: ask which steps are applied.
  if (check.ok || check.reason !== 'dependency_not_applied') return check;
  let applied: ReadonlySet<string>;
  try {
    applied = new Set((await gate.getRun(grant.runId)).applied);
  } catch (error) {
    return {
      ok: false,
      reason: 'dependency_not_applied',
      message: `step ${step.id} depends on other steps, and Countersign could not be asked which are applied (${error instanceof Error ? error.message : String(error)}): not running it`,
    };
  }
  return verifyDecisionStep(grant, step, keys, now, applied);
}
