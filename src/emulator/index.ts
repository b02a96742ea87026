/**
 * A local stand-in for Slack (docs/architecture.md §4): the Web API subset the bot uses, an in-memory workspace
 * to assert on and watch, Block Kit limit checks, and interaction payloads to drive the bot — signed
 * over HTTP, or in envelopes over Socket Mode.
 * See README.md.
 */

export {
  buildAppHomeOpenedEvent,
  buildSlashCommand,
  type CommandAnswer,
  postEvent,
  postSlashCommand,
  ResponseUrls,
} from './app-requests.ts';
export {
  BLOCK_KIT_LIMITS,
  type BlockKitRule,
  type BlockKitViolation,
  checkMessageBlocks,
  checkView,
} from './block-kit-limits.ts';
export {
  createSlackEmulator,
  DEFAULT_APP_TOKEN,
  DEFAULT_BOT_TOKEN,
  DEFAULT_CHANNELS,
  DEFAULT_IDENTITY,
  DEFAULT_RATE_LIMIT,
  DEFAULT_USERS,
  type SlackEmulator,
  type SlackEmulatorOptions,
} from './create-slack-emulator.ts';
export type {
  Fault,
  FaultKind,
  FaultSpec,
  FaultStatus,
  InjectedFault,
  SlackFaults,
  TriggeredFault,
} from './faults.ts';
export {
  type ActionContainer,
  type BlockActionInput,
  type BlockActionsPayload,
  buildBlockActionsPayload,
  buildViewClosedPayload,
  buildViewSubmissionPayload,
  buttonAction,
  type InteractingUser,
  type InteractionOptions,
  type InteractionResponse,
  type MessageLike,
  postInteraction,
  SLACK_ACK_TIMEOUT_MS,
  type SlackSignatureHeaders,
  signSlackRequest,
  type ViewClosedPayload,
  type ViewLike,
  type ViewSubmissionPayload,
} from './interactions.ts';
export type { InteractionTarget } from './page/page-interactions.ts';
export type {
  PageActionRequest,
  PageActionResult,
  PageChannel,
  PageCloseRequest,
  PageCloseResult,
  PageFailure,
  PageModal,
  PageSnapshot,
  PageSubmitRequest,
  PageSubmitResult,
  PageUser,
  Persona,
  SubmitOutcome,
} from './page/page-protocol.ts';
export {
  type MethodRateLimit,
  perMinute,
  type RateLimit,
  type RateLimits,
  SLACK_RATE_LIMITS,
  SLACK_RATE_TIERS,
} from './rate-limiter.ts';
export type {
  Block,
  EmulatedChannel,
  EmulatedEphemeral,
  EmulatedIdentity,
  EmulatedMessage,
  EmulatedUsergroup,
  MessageMetadata,
  PlainText,
  SlackUser,
  SlackView,
  ViewStateValues,
} from './slack-objects.ts';
export {
  isSocketModeError,
  SOCKET_MODE_PATH,
  type SocketModeEndpoint,
  SocketModeError,
  type SocketModeErrorCode,
} from './socket-mode.ts';
export { inputValues, type OptionChoice, type StateValue, stateValue } from './state-values.ts';
export {
  isTriggerExpired,
  isTriggerId,
  mintTriggerId,
  SLACK_TRIGGER_TTL_MS,
  triggerIdMintedAt,
  triggerIdUser,
} from './trigger-ids.ts';
export { type ChannelSeed, MODAL_STACK_LIMIT, type UserSeed, type WorkspaceState } from './workspace.ts';
export type { EmulatorCall, WorkspaceEvent, WorkspaceListener } from './workspace-events.ts';
