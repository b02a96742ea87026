import { Counter, Histogram, Registry } from 'prom-client';
import type { UseCaseResult } from '../approvals/index.ts';
import { isCountersignError } from '../pipeline/index.ts';

/**
 * Prometheus metrics served at `GET /metrics`: validation rejections by phase, decisions by outcome,
 * time to decision, edits, escalations and stale refusals. Fed from use-case results, so every entry
 * point (clicks, timers, intake) is counted the same way.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly rejections = new Counter({
    name: 'countersign_validation_rejections_total',
    help: 'Plans or edits rejected by the validation pipeline, by phase',
    labelNames: ['phase'] as const,
    registers: [this.registry],
  });
  private readonly decisions = new Counter({
    name: 'countersign_decisions_total',
    help: 'Final decisions, by outcome',
    labelNames: ['status'] as const,
    registers: [this.registry],
  });
  private readonly timeToDecision = new Histogram({
    name: 'countersign_time_to_decision_seconds',
    help: 'From submission to decision',
    buckets: [1, 10, 60, 300, 900, 3600, 4 * 3600, 24 * 3600],
    registers: [this.registry],
  });
  private readonly edits = new Counter({
    name: 'countersign_edits_total',
    help: 'Edits that created a new version',
    registers: [this.registry],
  });
  private readonly escalations = new Counter({
    name: 'countersign_escalations_total',
    help: 'Escalation levels fired',
    registers: [this.registry],
  });
  private readonly staleRefusals = new Counter({
    name: 'countersign_stale_refusals_total',
    help: 'Clicks, edits and timers refused because they aimed at a superseded version',
    registers: [this.registry],
  });

  private readonly failures = new Counter({
    name: 'countersign_errors_total',
    help: 'Failures reported rather than shown to anyone, by code (CountersignError codes; "other" for the rest)',
    labelNames: ['code'] as const,
    registers: [this.registry],
  });

  private readonly gatewayRequests = new Counter({
    name: 'countersign_gateway_requests_total',
    help: 'Agent API requests answered, by route and HTTP status (0: refused before its route ran)',
    labelNames: ['route', 'status'] as const,
    registers: [this.registry],
  });
  private readonly gatewayRefusals = new Counter({
    name: 'countersign_gateway_refusals_total',
    help: 'Agent API requests refused before any handler ran, by reason (bad signature, stale timestamp, size, rate…)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  private readonly webhookAttempts = new Counter({
    name: 'countersign_webhook_attempts_total',
    help: 'Decision webhook POSTs, by outcome (delivered, refused by the receiver, unreachable)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  /** The gateway's metrics (GatewayMetrics). */
  readonly gateway = {
    request: (route: string, status: number) => this.gatewayRequests.inc({ route, status: String(status) }),
    refused: (reason: string) => this.gatewayRefusals.inc({ reason }),
  };

  /** The webhook worker's metrics (WebhookMetrics). */
  readonly webhooks = {
    attempt: (outcome: 'delivered' | 'refused' | 'unreachable') => this.webhookAttempts.inc({ outcome }),
  };

  /** Counts a failure that was reported (logged), by its code. */
  error(error: unknown): void {
    this.failures.inc({ code: isCountersignError(error) ? error.code : 'other' });
  }

  /** Counts what a use case did. */
  observe(result: UseCaseResult): void {
    switch (result.kind) {
      case 'invalid':
        this.rejections.inc({ phase: result.phase });
        if (result.decision !== undefined) this.decisions.inc({ status: 'invalid' });
        break;
      case 'approved':
      case 'rejected':
      case 'expired':
        this.decisions.inc({ status: result.kind });
        this.timeToDecision.observe(
          Math.max(0, ((result.run.decidedAt ?? result.run.createdAt) - result.run.createdAt) / 1000),
        );
        break;
      case 'edited':
        this.edits.inc();
        break;
      case 'escalated':
        this.escalations.inc();
        break;
      case 'stale':
        this.staleRefusals.inc();
        break;
      default:
        break;
    }
  }

  /** The exposition text and its content type. */
  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
