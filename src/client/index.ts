/**
 * The agent client: submit plans to Countersign over HTTP, await decisions, verify each step before
 * its effect with Countersign's public keys, report outcomes (docs/agent-client.md, docs/http-api.md).
 */
export type { Decision, DecisionStep, ReceiptKeys, StepVerification } from '../pipeline/index.ts';
export { keysFromJwks, verifyDecisionStep } from '../pipeline/index.ts';
export { signedHeaders, verifySignedRequest } from '../protocol/index.ts';
export {
  AgentClient,
  type AgentClientOptions,
  type OnDecisionOptions,
  type OutcomeReport,
  type RunStatus,
  type StepOutcome,
  type Submitted,
  type WaitOptions,
} from './agent-client.ts';
export { type CursorStore, type DecisionHandler, fileCursor } from './decision-feed.ts';
export * from './errors.ts';
export type { RetryPolicy } from './http.ts';
export { buildPlanText, type PlanStepInput, type SubmitInput } from './plan-input.ts';
export { type PublicKeysInput, pinnedReceiptKeys } from './receipt-keys.ts';
export { createRunIdGenerator } from './run-id.ts';
export { type HeaderSource, verifyWebhook, type WebhookCheck } from './webhook.ts';
