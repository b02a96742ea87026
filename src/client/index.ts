/** The agent client: submit plans, await decisions, verify each step before its effect, report outcomes. */
export type { Decision, DecisionStep, StepVerification } from '../pipeline/index.ts';
export {
  AgentClient,
  type AgentClientOptions,
  type DecisionHandler,
  type OutcomeReport,
  type WaitOptions,
} from './agent-client.ts';
export * from './errors.ts';
export { buildPlanText, type PlanStepInput, type SubmitInput } from './plan-input.ts';
export { createRunIdGenerator } from './run-id.ts';
