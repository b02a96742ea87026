/**
 * Model-based test of the approval state machine (issue 11 §4).
 *
 * Random runs — a submission, then up to 14 approvals, rejections, edits (changed, added — often
 * identical to a step already there —, removed, moved and reverted steps, restorations, ids reused or
 * malformed, steps the pipeline refuses), diff-message actions, waits, expiry and escalation timers,
 * re-submissions, by people from ops, fin and lead and an outsider, on current and stale versions — go
 * to the real ApprovalService on real Redis and to the reference model in ./model/run-model.ts. After
 * every command the answer, the run (`getRun`: status, version, steps, provenance, standing, awaiting,
 * blocked, escalation, ids used, approval records) and the decision (`getDecision`, also what was
 * delivered) must be the model's, and the invariants in ./model/observe.ts must hold on the service's
 * own state. Every stored edit is validated again as an edit by its editor (all four phases).
 *
 * A failure prints fast-check's seed and path with the shrunk commands (and their replayPath), the
 * fields that differ, and the run as it went (concrete steps and answers). Replay it with
 * `MODEL_SEED=<seed> MODEL_PATH=<path> MODEL_REPLAY_PATH=<replayPath>`; run more with
 * `MODEL_RUNS=50000`, see what the runs covered with `MODEL_STATS=1`. The runs go in 8 lanes at once
 * (each its own fast-check property): one lane waits on Redis round trips more than it computes.
 */
import fc from 'fast-check';
import { afterAll, describe, it } from 'vitest';
import { ApprovalService } from '../../src/approvals/service.ts';
import type { Decision } from '../../src/pipeline/index.ts';
import { testRedis } from '../helpers/redis.ts';
import { type Real, runCommand, submitCommand, tally } from './model/commands.ts';
import { AGENT, modelConfig, SECRET } from './model/config.ts';
import { type ApprovalBinding, BY_STEP_ID_AND_DIGEST, RunModel } from './model/run-model.ts';

const { redis, prefix, cleanup } = testRedis('approval-model');
afterAll(cleanup);

const T0 = Date.parse('2026-04-01T10:00:00Z');
const RUNS = Number(process.env.MODEL_RUNS ?? 2_000);
const LANES = 8;
/** 2,000 runs take 10–30 s here (2 cores, shared); the timeout grows with `MODEL_RUNS`. */
const TIMEOUT_MS = Math.max(120_000, RUNS * 30);
/** A failure's `seed` and `path`, and the `replayPath` printed after its commands, replay it. */
const replay = {
  ...(process.env.MODEL_SEED === undefined ? {} : { seed: Number(process.env.MODEL_SEED) }),
  ...(process.env.MODEL_PATH === undefined ? {} : { path: process.env.MODEL_PATH }),
};
const replayPath = process.env.MODEL_REPLAY_PATH;

let runs = 0;

/** A fresh run id, model and service for one sequence: nothing is shared, nothing needs flushing. */
function setup(binding: ApprovalBinding): { model: RunModel; real: Real } {
  const runId = `model-${++runs}`;
  const clock = { now: T0 };
  const delivered: Decision[] = [];
  const svc = new ApprovalService({
    redis,
    config: modelConfig,
    prefix,
    secrets: (agent) => (agent === AGENT ? SECRET : undefined),
    clock: () => clock.now,
    deliver: async (decision) => {
      delivered.push(decision);
    },
  });
  return { model: new RunModel(runId, T0, binding), real: { svc, runId, clock, delivered, trace: [] } };
}

/** Random runs: a submission, then 0–14 commands, checked against the model bound by `binding`. */
function runProperty(binding: ApprovalBinding) {
  return fc.asyncProperty(
    submitCommand,
    fc.commands([runCommand], {
      maxCommands: 14,
      size: 'max',
      ...(replayPath === undefined ? {} : { replayPath }),
    }),
    (submit, commands) => fc.asyncModelRun(() => setup(binding), [submit, ...commands]),
  );
}

describe('the approval service against a reference model of a run', () => {
  it(
    `agrees with the model on every answer and state and keeps the approval invariants (${RUNS} random runs)`,
    async () => {
      const lanes = 'seed' in replay ? 1 : LANES;
      const results = await Promise.allSettled(
        Array.from({ length: lanes }, () =>
          fc.assert(runProperty(BY_STEP_ID_AND_DIGEST), { numRuns: Math.ceil(RUNS / lanes), ...replay }),
        ),
      );
      const failures = results.flatMap((result) => (result.status === 'rejected' ? [result.reason] : []));
      if (process.env.MODEL_STATS !== undefined) {
        const lines = [...tally].sort().map(([answer, count]) => `${String(count).padStart(6)}  ${answer}`);
        console.log(`What the runs' commands were answered:\n${lines.join('\n')}`);
      }
      if (failures.length > 0) throw failures[0];
    },
    TIMEOUT_MS,
  );
});
