/**
 * The fault switch: makes chosen Web API calls fail the ways Slack's do — 429 with Retry-After, a 5xx
 * before or after the call took effect, a request held with no answer — and makes methods slow, so tests
 * can reproduce each case on demand. The request handler asks it, per call, what to do.
 */

/** A call's decoded arguments: web-api's `ApiArgs`, restated because importing it closes a cycle. */
type ApiArgs = { readonly [key: string]: unknown };

/** The 5xx statuses a fault can answer with. */
export type FaultStatus = 500 | 502 | 503;

/** What a fault does to the call it hits. */
export type FaultKind = '429' | 'error-before' | 'error-after' | 'hang';

/** Which calls a fault hits, and how many of them. */
interface FaultTarget {
  /** The Web API method, e.g. `chat.postMessage`. */
  readonly method: string;
  /** How many matching calls it hits (default 1; `Infinity`: every one until cleared). */
  readonly times?: number;
  /** Only calls whose decoded arguments this accepts (default: every call of the method). */
  readonly match?: (args: ApiArgs) => boolean;
}

/** A fault to inject, see {@link SlackFaults.inject}. */
export type FaultSpec = FaultTarget &
  (
    | {
        /** HTTP 429 `ratelimited` with `Retry-After`, nothing applied. */
        readonly kind: '429';
        /** Default 1. */
        readonly retryAfterSeconds?: number;
      }
    | {
        /** A 5xx: before = nothing applied; after = the call is applied, then answered 5xx. */
        readonly kind: 'error-before' | 'error-after';
        /** Default 500. */
        readonly status?: FaultStatus;
      }
    | {
        /** The request is held: never answered nor applied, or after `hangMs` applied and answered. */
        readonly kind: 'hang';
        /** Default: held until {@link SlackFaults.release}, `reset()` or `stop()`. */
        readonly hangMs?: number;
      }
  );

/** A fault with its defaults filled in. */
export type Fault =
  | { readonly kind: '429'; readonly retryAfterSeconds: number }
  | { readonly kind: 'error-before' | 'error-after'; readonly status: FaultStatus }
  | { readonly kind: 'hang'; readonly hangMs: number | undefined };

/** A fault as injected, with how many calls it still hits. */
export type InjectedFault = Fault & {
  /** Counts up from 1 in injection order (from 1 again after a clear). */
  readonly id: number;
  readonly method: string;
  readonly times: number;
  readonly remaining: number;
  /** Whether it only hits calls its `match` accepts. */
  readonly filtered: boolean;
};

/** A call a fault hit. */
export type TriggeredFault = Fault & {
  /** The {@link InjectedFault} that hit. */
  readonly id: number;
  readonly method: string;
  /** The call's arguments, decoded. */
  readonly args: ApiArgs;
  /** When (the emulator's clock, epoch ms). */
  readonly at: number;
};

/** The fault switch, as tests see it (`slack.faults`). */
export interface SlackFaults {
  /**
   * Make the next `times` calls of `method` (those `match` accepts) fail as `kind` says. Faults for the
   * same call apply in injection order, each to its own calls: two `times: 1` faults hit two calls.
   */
  inject(spec: FaultSpec): InjectedFault;
  /** Hold every call of `method` for `delayMs` before handling it (0 removes the delay). */
  delay(rule: { readonly method: string; readonly delayMs: number }): void;
  /** Let every held request (hangs, delays) go on now: applied and answered as if its time had passed. */
  release(): void;
  /** Drop pending faults, delays and the records; requests already held stay held. */
  clear(): void;
  /** Every fault injected since the last clear, oldest first (copies). */
  readonly injected: readonly InjectedFault[];
  /** Every call a fault hit since the last clear, oldest first (copies). */
  readonly triggered: readonly TriggeredFault[];
  /** Delays by method. */
  readonly delays: Readonly<Record<string, number>>;
  /** Requests held right now (hung or delayed). */
  readonly held: number;
}

/** The answer body of a 5xx fault: Slack's error names for these (the client sees only the status). */
export function faultBody(status: FaultStatus): { readonly ok: false; readonly error: string } {
  const error = status === 503 ? 'service_unavailable' : status === 502 ? 'fatal_error' : 'internal_error';
  return { ok: false, error };
}

type Armed = { fault: Fault; id: number; method: string; times: number; remaining: number } & Pick<
  FaultTarget,
  'match'
>;

/** How a held request ends: it goes on (its time passed, or released) or is abandoned (reset, stop). */
export type HoldOutcome = 'go' | 'abandon';

/** The fault switch and the held requests, for the request handler. */
export class FaultSwitch implements SlackFaults {
  #nextId = 1;
  #armed: Armed[] = [];
  #triggered: TriggeredFault[] = [];
  #delays = new Map<string, number>();
  readonly #holds = new Set<{ readonly end: (outcome: HoldOutcome) => void }>();

  constructor(private readonly now: () => number) {}

  inject(spec: FaultSpec): InjectedFault {
    const times = spec.times ?? 1;
    if (!(times === Number.POSITIVE_INFINITY || (Number.isInteger(times) && times >= 1))) {
      throw new RangeError(`fault times must be a whole number >= 1 or Infinity, got ${times}`);
    }
    const armed: Armed = {
      fault: resolveFault(spec),
      id: this.#nextId++,
      method: spec.method,
      times,
      remaining: times,
      ...(spec.match ? { match: spec.match } : {}),
    };
    this.#armed.push(armed);
    return snapshot(armed);
  }

  delay(rule: { readonly method: string; readonly delayMs: number }): void {
    if (!(Number.isFinite(rule.delayMs) && rule.delayMs >= 0)) {
      throw new RangeError(`delayMs must be a finite number >= 0, got ${rule.delayMs}`);
    }
    if (rule.delayMs === 0) this.#delays.delete(rule.method);
    else this.#delays.set(rule.method, rule.delayMs);
  }

  release(): void {
    this.#endHolds('go');
  }

  clear(): void {
    this.#nextId = 1;
    this.#armed = [];
    this.#triggered = [];
    this.#delays.clear();
  }

  get injected(): readonly InjectedFault[] {
    return this.#armed.map(snapshot);
  }

  get triggered(): readonly TriggeredFault[] {
    return [...this.#triggered];
  }

  get delays(): Readonly<Record<string, number>> {
    return Object.fromEntries(this.#delays);
  }

  get held(): number {
    return this.#holds.size;
  }

  /** The delay for `method`'s calls (0: none). */
  delayFor(method: string): number {
    return this.#delays.get(method) ?? 0;
  }

  /** The first pending fault that hits this call, used up by one; undefined when none does. */
  take(method: string, args: ApiArgs): Fault | undefined {
    const armed = this.#armed.find(
      (candidate) =>
        candidate.remaining > 0 && candidate.method === method && (candidate.match?.(args) ?? true),
    );
    if (armed === undefined) return undefined;
    armed.remaining -= 1;
    this.#triggered.push({ ...armed.fault, id: armed.id, method, args, at: this.now() });
    return armed.fault;
  }

  /** Hold a request for `ms` (undefined: until released or abandoned). */
  hold(ms: number | undefined): Promise<HoldOutcome> {
    return new Promise((resolve) => {
      const timer = ms === undefined ? undefined : setTimeout(() => hold.end('go'), ms);
      // A held request must not keep the process alive on its own.
      timer?.unref();
      const hold = {
        end: (outcome: HoldOutcome) => {
          clearTimeout(timer);
          this.#holds.delete(hold);
          resolve(outcome);
        },
      };
      this.#holds.add(hold);
    });
  }

  /** Abandon every held request (reset, stop): none is applied or answered. */
  abandonHeld(): void {
    this.#endHolds('abandon');
  }

  #endHolds(outcome: HoldOutcome): void {
    for (const hold of [...this.#holds]) hold.end(outcome);
  }
}

function resolveFault(spec: FaultSpec): Fault {
  switch (spec.kind) {
    case '429': {
      const retryAfterSeconds = spec.retryAfterSeconds ?? 1;
      if (!(Number.isInteger(retryAfterSeconds) && retryAfterSeconds >= 0)) {
        throw new RangeError(`retryAfterSeconds must be a whole number >= 0, got ${retryAfterSeconds}`);
      }
      return { kind: '429', retryAfterSeconds };
    }
    case 'error-before':
    case 'error-after': {
      const status = spec.status ?? 500;
      if (![500, 502, 503].includes(status)) {
        throw new RangeError(`fault status must be 500, 502 or 503, got ${status}`);
      }
      return { kind: spec.kind, status };
    }
    case 'hang':
      if (spec.hangMs !== undefined && !(Number.isFinite(spec.hangMs) && spec.hangMs >= 0)) {
        throw new RangeError(`hangMs must be a finite number >= 0, got ${spec.hangMs}`);
      }
      return { kind: 'hang', hangMs: spec.hangMs };
  }
}

function snapshot(armed: Armed): InjectedFault {
  return {
    ...armed.fault,
    id: armed.id,
    method: armed.method,
    times: armed.times,
    remaining: armed.remaining,
    filtered: armed.match !== undefined,
  };
}
