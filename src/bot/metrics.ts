import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { EditWindowStats } from '../approvals/edit-window.ts';
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
  private readonly stepsTouched = new Histogram({
    name: 'countersign_edit_steps_touched',
    help: 'Steps each edit added, changed or removed, by agent (this process)',
    labelNames: ['agent'] as const,
    buckets: [1, 2, 3, 5, 8, 13, 21],
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

  /**
   * Each agent's sliding edit window, read from Redis when `/metrics` is scraped (so every replica
   * serves the same figures): plans submitted and edited in the window, the plans where more than half
   * of the steps were touched, their share, and the window's length.
   */
  watchEditWindows(source: {
    readonly agents: readonly string[];
    stats(agent: string): Promise<EditWindowStats>;
  }): void {
    // One read of every window per scrape: the gauges collect one after another within a scrape.
    let last: { at: number; all: Promise<EditWindowStats[]> } | undefined;
    const windows = () => {
      if (last === undefined || Date.now() - last.at > 1_000) {
        const all = Promise.all(source.agents.map((agent) => source.stats(agent)));
        all.catch(() => {
          last = undefined;
        });
        last = { at: Date.now(), all };
      }
      return last.all;
    };
    const gauge = (name: string, help: string, read: (stats: EditWindowStats) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ['agent'] as const,
        registers: [this.registry],
        async collect() {
          for (const stats of await windows()) this.set({ agent: stats.agent }, read(stats));
        },
      });
    gauge(
      'countersign_window_plans',
      'Validated plans submitted in the edit window, by agent',
      (s) => s.plans,
    );
    gauge(
      'countersign_window_plans_edited',
      'Plans in the edit window that people edited, by agent',
      (s) => s.edited,
    );
    gauge(
      'countersign_window_plans_rewritten',
      'Plans in the edit window with more than half of their steps added, changed or removed, by agent',
      (s) => s.heavy,
    );
    gauge(
      'countersign_window_rewritten_share',
      "Share (0-1) of the edit window's plans with more than half of their steps touched: what the drift alarm watches",
      (s) => s.share,
    );
    gauge('countersign_window_seconds', 'Length of the edit window, by agent', (s) => s.windowMs / 1000);
  }

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
        this.stepsTouched.observe(
          { agent: result.run.agent },
          result.diff.counts.added + result.diff.counts.changed + result.diff.counts.removed,
        );
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
