/**
 * `npm run demo` — for now, a terminal walkthrough of the validation pipeline on the freight example:
 * the agent's plan is validated, an operator's edit that adds a refund is refused (may_author), the same
 * edit by a finance user passes, and the diff shows what changed. The Slack emulator, bot and sample
 * agent join this command when the demo issue lands.
 */
import config from '../examples/freight/countersign.config.ts';
import { addedRefundStep, freightPlan } from '../examples/freight/plans.ts';
import {
  describeFieldPath,
  diffPlans,
  formatMoney,
  type ValidatedPlan,
  type ValidationContext,
  validate,
} from '../src/pipeline/index.ts';

const now = Date.now();
const ctx: ValidationContext = { config: config.pipeline, now };
const say = (line = '') => console.log(line);

function showPlan(plan: ValidatedPlan): void {
  say(`  run ${plan.runId} · agent ${plan.agent} · plan digest ${plan.digest.slice(0, 12)}…`);
  for (const step of plan.steps) {
    const route =
      step.route.kind === 'review'
        ? `review by ${step.route.approvals} of ${step.route.group}`
        : step.route.kind === 'block'
          ? `blocked: ${step.route.reason}`
          : 'auto';
    say(`  ${step.id}  ${step.summary ?? step.tool}  [${route}]  digest ${step.digest.slice(0, 12)}…`);
    for (const note of step.annotations) say(`      ⚠ ${note.message}`);
  }
}

say('Countersign demo — the validation pipeline on the freight example');
say();
const original = freightPlan({ runId: 'demo-run-1', now });
const v1 = validate(JSON.stringify(original), ctx);
if (!v1.ok) throw new Error(`the example plan should validate: ${JSON.stringify(v1.diagnostics)}`);
say('1. The agent submits its 3-step plan. parse → resolve → type → authorize all pass:');
showPlan(v1.plan);

const edited = { ...original, steps: [...original.steps, addedRefundStep] };
say();
say(
  `2. Operator U0OP1 edits it, adding a ${formatMoney(addedRefundStep.args.amount, 'USD')} refund. The edit is a new plan,`,
);
say('   so it goes through every phase again, plus may_author:');
const byOperator = validate(edited, { ...ctx, edit: { editorId: 'U0OP1', base: v1.plan } });
if (byOperator.ok) throw new Error('an operator must not be able to write a refund');
for (const d of byOperator.diagnostics) say(`   ✗ [${d.phase}/${d.code}] ${d.message}`);

say();
say('3. Finance user U0FIN1 makes the same edit. It passes; the refund routes to finance review and its');
say('   annotate hook flags the invoice as belonging to another account:');
const byFinance = validate(edited, { ...ctx, edit: { editorId: 'U0FIN1', base: v1.plan } });
if (!byFinance.ok) throw new Error(`the finance edit should pass: ${JSON.stringify(byFinance.diagnostics)}`);
showPlan(byFinance.plan);

say();
say('4. The diff between the two versions: only touched steps need re-approval.');
const diff = diffPlans(v1.plan, byFinance.plan);
for (const change of diff.changes) {
  if (change.kind === 'added') say(`   + added ${change.stepId} (${change.step.tool})`);
  if (change.kind === 'removed') say(`   - removed ${change.stepId} (${change.step.tool})`);
  if (change.kind === 'moved') say(`   ↕ moved ${change.stepId}`);
  if (change.kind === 'changed') {
    for (const field of change.fields) say(`   ~ ${change.stepId}.${describeFieldPath(field.path)} changed`);
  }
}
say(`   re-approval required for: ${diff.touchedStepIds.join(', ')}`);
say();
say('Next: the Slack emulator, bot and sample agent join this demo as their issues land (see README).');
