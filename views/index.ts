/** Pure Block Kit builders for Slack (docs/architecture.md §9): no I/O, time passed in. See README.md for the ids. */

export {
  type AppHomeModel,
  buildAppHome,
  buildCommandHelp,
  buildPendingAnswer,
  buildRunAnswer,
  type CardLinks,
} from './app-home.ts';
export { type ArgField, argFields, type FieldKind, formatArgLines, formatArgValue } from './arg-fields.ts';
export {
  type ArgumentsModalModel,
  argumentsOnDemand,
  buildArgumentsModal,
  SHOW_ARGS_ACTION,
  showArgsButton,
} from './arguments-modal.ts';
export { LIMITS, type SlackMessage, type ViewStateValues } from './blocks.ts';
export {
  type ButtonValue,
  type ButtonValueResult,
  buttonValueSchema,
  encodeButtonValue,
  parseButtonValue,
} from './button-value.ts';
export { type ApprovalCardModel, approvalActions, approveButton, buildApprovalCard } from './card.ts';
export { changeSetText, changeSetWarnings, entityName, fieldLine } from './change-set.ts';
export { buildDiffMessage, type DiffMessageModel } from './diff-message.ts';
export * from './drift-alarm.ts';
export { diagnosticsToModalErrors, type EditSubmissionAck, editResultAck } from './edit-errors.ts';
export {
  type AddedStep,
  argBlockId,
  EDIT_IDS,
  type EditMetadata,
  type EditMetadataResult,
  encodeEditMetadata,
  MAX_ADDED_STEPS,
  nextStepIds,
  parseEditMetadata,
} from './edit-layout.ts';
export { buildEditModal, type EditModalModel, editRefusalModal } from './edit-modal.ts';
export { type EditSubmission, readEditSubmission } from './edit-submission.ts';
export {
  buildEscalationMessage,
  type EscalationMessageModel,
  type EscalationStepLabel,
} from './escalation-message.ts';
export { isActionable, lifecycleText, type RunLifecycle } from './lifecycle.ts';
export {
  clipMrkdwn,
  escapeMrkdwn,
  joinWithinLimit,
  listInWords,
  mention,
  mentionList,
  plural,
  quoteLines,
  truncate,
} from './mrkdwn.ts';
export { buildDuplicateNotice, buildFormTooLateNotice, buildNotice, buildNoticeModal } from './notices.ts';
export { NAMED_PEOPLE_MAX, type PeopleNames, peopleList, peopleShown, person } from './people.ts';
export {
  buildRejectModal,
  REJECT_IDS,
  REJECT_REASON_MAX,
  type RejectSubmission,
  readRejectSubmission,
} from './reject-modal.ts';
export {
  awaitingText,
  progressText,
  renderStep,
  SECTION_TEXT_MAX,
  type StepRenderInput,
  type StepRenderOptions,
  type StepStanding,
  stepHeading,
  stepLine,
  stepSection,
  stepStanding,
  toolTitle,
} from './step-section.ts';
export { formatDay, formatInstant, formatInstantFromNow, formatSpan, type TimeOptions } from './time.ts';
export { toolOf, type ViewConfig } from './view-config.ts';
