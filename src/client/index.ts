/**
 * The agent client: submit plans to Countersign over HTTP, await decisions, verify each step before
 * its effect with Countersign's public keys, report outcomes (docs/agent-client.md, docs/http-api.md).
 */
export type {
  Decision,
  DecisionStep,
  Grant,
  Precondition,
  ReceiptKeys,
  Release,
  ReleasedStep,
  StepToRun,
  StepVerification,
  WorldChanged,
} from '../pipeline/index.ts';
export { checkPreconditions, isRelease, keysFromJwks, verifyDecisionStep } from '../pipeline/index.ts';
export { signedHeaders, verifySignedRequest } from '../protocol/index.ts';
export { AgentClient } from './agent-client.ts';
export type {
  AgentClientOptions,
  OnDecisionOptions,
  RunStatus,
  Submitted,
  VerifyStepOptions,
  WaitOptions,
} from './client-types.ts';
export { type CursorStore, type DecisionHandler, fileCursor } from './decision-feed.ts';
export * from './errors.ts';
export type { RetryPolicy } from './http.ts';
export type { OutcomeInput, OutcomeReport, StepOutcome } from './outcome-report.ts';
export { buildPlanText, type PlanStepInput, type SubmitInput } from './plan-input.ts';
export { type PublicKeysInput, pinnedReceiptKeys } from './receipt-keys.ts';
export { createRunIdGenerator } from './run-id.ts';
export { type HeaderSource, verifyWebhook, type WebhookCheck } from './webhook.ts';
export type { ReleasesRead } from './wire-read.ts';
export { checkWorld, type ReadVersion, type WorldCheck } from './world-check.ts';
