import type { KeyObject } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApprovalService, DecisionFeed, RunView } from '../approvals/index.ts';
import type { CountersignConfig } from '../config/index.ts';
import type { ErrorReporter } from '../log.ts';
import type { Release } from '../pipeline/index.ts';
import type { DecisionWaiters } from './decision-waiters.ts';
import type { RateLimiter } from './rate-limit.ts';

/** What the gateway counts (the bot's Metrics implements it). */
export interface GatewayMetrics {
  /** One answered request: its route and status. */
  request(route: string, status: number): void;
  /** One request refused before any handler ran (auth, size, rate), by reason. */
  refused(reason: string): void;
}

/** What the gateway reads of releases (src/approvals/releases-read.ts over the server's Redis). */
export interface ReleaseReads {
  /** The run's signed releases, oldest first; empty when none. */
  read(runId: string): Promise<readonly Release[]>;
}

export interface GatewayDeps {
  readonly approvals: ApprovalService;
  readonly releases: ReleaseReads;
  readonly feed: DecisionFeed;
  readonly waiters: DecisionWaiters;
  readonly config: CountersignConfig;
  /** The agent's shared secret, or undefined for an agent not configured. */
  readonly secretOf: (agent: string) => string | undefined;
  /** Countersign's receipt keys, current first (the JWKS). */
  readonly publicKeys: readonly KeyObject[];
  readonly rateLimit: RateLimiter;
  readonly metrics: GatewayMetrics;
  /**
   * Redis's time, estimated (ms): the signature window and rate limits agree across replicas whose
   * own clocks differ; what a run becomes is decided by approvals at Redis's `TIME` itself.
   */
  readonly clock: () => number;
  readonly onError: ErrorReporter;
  /**
   * A submission retried for a run still pending (the first answer may have been lost to a crash):
   * makes sure its timers and its card exist (both idempotent).
   */
  readonly recover: (run: RunView) => Promise<void>;
}

/** One authenticated request, as a handler sees it. */
export interface AgentRequest {
  readonly agent: string;
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
  readonly body: string;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** Fires when the caller goes away (long polls stop waiting). */
  readonly closed: AbortSignal;
}
