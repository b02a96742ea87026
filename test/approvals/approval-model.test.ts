/**
 * Model-based test of the approval state machine (issue 11 §4).
 *
 * Random runs — a submission (steps often depending on an earlier one), then up to 14 approvals, rejections, edits (changed, added — often
 * identical to a step already there —, removed, moved and reverted steps, restorations, ids reused or
 * malformed, steps the pipeline refuses), diff-message actions, waits, expiry and escalation timers,
 * re-submissions, the agent's outcome reports (applying, applied, failed), by people from ops, fin and
 * lead and an outsider, on current and stale versions, and the world the tools' async hooks read
 * moving under them (order B's warehouse closing and opening, supplier records changing) — go
 * to the real ApprovalService on real Redis and to the reference model in ./model/run-model.ts. After
 * every command the answer, the run (`getRun`: status, version, steps, provenance, standing, awaiting,
 * blocked, escalation, ids used, approval records) and the decision (`getDecision`, also what was
 * delivered, with the steps released before it) must be the model's, and the invariants in
 * ./model/observe.ts must hold on the service's own state — among them that no step is released before
 * every step it depends on was reported applied and its own approvals were complete, that only
 * `continue` steps are, and that nothing is released after the run was decided. Every stored edit is validated again as an edit by its editor (all four phases).
 *
 * The hooks (issue 19, ./model/config.ts): `ship`'s `checks` refuse order B while its warehouse is
 * closed, `pay`'s `preview` reads its supplier's record version. The model predicts that a submission,
 * or an edit that touches a ship-B step, is refused at authorize while closed; that the approval which
 * completes the plan then holds the run (pending, `recheckProblem` on the run) until an approval after
 * reopening; that a release after an approval or an `applied` report releases nothing while a check
 * fails; and that each payment's change set — shown on the run, and bound into the decision as its
 * `preconditions` — names the supplier version read when the step was submitted or last touched by an
 * edit, never the one at approval. Breaking that last prediction (the version at decision time) is
 * caught within a few hundred runs: submit([pay globex 500]), wait(30m), bump supplier globex,
 * approve(U0OPS1) — the expiry decision binds version 1, the broken model says 2.
 *
 * A failure prints fast-check's seed and path with the shrunk commands (and their replayPath), the
 * fields that differ, and the run as it went (concrete steps and answers). Replay it with
 * `MODEL_SEED=<seed> MODEL_PATH=<path> MODEL_REPLAY_PATH=<replayPath>`; run more with
 * `MODEL_RUNS=50000`, see what the runs covered with `MODEL_STATS=1`. The runs go in 8 lanes at once
 * (each its own fast-check property): one lane waits on Redis round trips more than it computes.
 *
 * The test of the test runs the same commands against a model that binds approvals by digest only
 * (the old rule: an approval of digest D counts for every step with digest D). The first
 * counterexample it found, shrunk (seed -728390402):
 *
 *   submit([ship{"order":"A"}, pay{"to":"acme","amount":500}], expires in 20m),
 *   approve(U0OPS1, current),
 *   edit(U0OPS1, current: add a copy of #0 at #0; add note{"text":"hi"} at #0)
 *
 * U0OPS1's click approves s1 (ship A); s2, a payment fin must approve, keeps the run pending. The edit
 * adds s4 with the very bytes of s1 (and s3, an automatic note the shrinking kept). The service shows
 * s4 awaiting one ops approval, with none: U0OPS1 approved s1, not s4. The digest-only model counts
 * U0OPS1's approval of those bytes for s4 as well, and shows only s2 awaiting — under the old
 * rule an approval given to one step approved another step added later with the same bytes. With its
 * fixed seed (and the commands as they are since the world the hooks read joined them) the test finds
 * the same thing: submit([note hi urgent, pay acme 500]), approve(U0FIN3), edit(U0OPS1: add a copy of
 * s1) — the service has the new s3 with no approval, the model counts U0FIN3's for it.
 */
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { ApprovalService } from '../../src/approvals/service.ts';
import type { Decision } from '../../src/pipeline/index.ts';
import { testRedis } from '../helpers/redis.ts';
import { testSigning } from '../support/stack.ts';
import { type Real, runCommand, submitCommand, tally } from './model/commands.ts';
import { modelConfig, openWorld } from './model/config.ts';
import { type ApprovalBinding, BY_DIGEST_ONLY, BY_STEP_ID_AND_DIGEST, RunModel } from './model/run-model.ts';

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
    signer: testSigning.signer,
    clock: () => clock.now,
    deliver: async (decision) => {
      delivered.push(decision);
    },
  });
  return {
    model: new RunModel(runId, T0, binding),
    real: { svc, redis, runId, clock, delivered, trace: [], world: openWorld(runId) },
  };
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

  it('catches a model that binds approvals by digest only (the old rule); the same runs pass the right model', async () => {
    // A fixed seed keeps the counterexample it prints the one recorded above; any seed finds one.
    const details = await fc.check(runProperty(BY_DIGEST_ONLY), { numRuns: 5_000, seed: 5 });
    expect(details.failed, 'the digest-only model was never caught').toBe(true);
    const error = details.errorInstance;
    // A disagreement with the service, not a crash of the test.
    expect(error instanceof Error ? error.message : String(error)).toMatch(
      /^(the run after|the decision after|.*: the answer)/,
    );
    const [submit, commands] = details.counterexample!;
    const right = setup(BY_STEP_ID_AND_DIGEST);
    await fc.asyncModelRun(() => right, [submit, ...commands]);
    console.log(
      [
        'The digest-only model, caught:',
        fc.defaultReportMessage(details),
        error instanceof Error ? error.message : String(error),
        '',
        'The same commands against the right model (they pass):',
        ...right.real.trace.map((line) => `  ${line}`),
      ].join('\n'),
    );
  }, 120_000);
});
