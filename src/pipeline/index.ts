/** The pure core: plan model, tools, the four validation phases, digests, diff and policy. No I/O. */
export * from './canonical-json.ts';
export * from './change-matcher.ts';
export * from './change-set.ts';
export * from './change-set-schema.ts';
export * from './check-json-value.ts';
export * from './consistency.ts';
export * from './context.ts';
export * from './decision.ts';
export * from './dependencies.ts';
export * from './diagnostics.ts';
export * from './diff.ts';
export * from './digest.ts';
export * from './edit-ids.ts';
export * from './envelope.ts';
export * from './errors.ts';
export * from './fields.ts';
export * from './hooks.ts';
export * from './json.ts';
export * from './json-path.ts';
export * from './money.ts';
export { ID_PATTERN, parseEnvelope, RUN_ID_PATTERN } from './phases/parse.ts';
export * from './plan.ts';
export * from './policy.ts';
export * from './receipt.ts';
export * from './renderings.ts';
export * from './signing.ts';
export * from './strict-json.ts';
export {
  type JsonCheck,
  type JsonLimits,
  type JsonProblem,
  type JsonValueProblem,
  type JsonValueProblemCode,
  MAX_JSON_PROBLEMS,
  type StrictJsonProblem,
  type StrictJsonProblemCode,
} from './strict-json-problems.ts';
export * from './submission.ts';
export * from './tool.ts';
export { gatherHooks, type ValidationResult, validate, validateWith } from './validate.ts';
