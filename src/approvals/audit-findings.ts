/** What the audit's state check reports, and how it words it: one line per finding, whatever was stored. */
import type { DecisionStatus } from '../pipeline/index.ts';

/** What kind of disagreement a finding reports. */
export type StateFindingCode =
  /** A journal record this check reads (approval, version, decision) lacks the fields its type has. */
  | 'event_unreadable'
  | 'approval_unreadable'
  /** An approvals-hash entry that no `approval` journal record accounts for. */
  | 'approval_without_record'
  | 'decision_unreadable'
  /** The stored decision's status / version / decidedBy matches no decision record in the journal. */
  | 'decision_without_record'
  /** An approval the decision counts that no `approval` journal record accounts for. */
  | 'decision_approval_without_record'
  /** The run hash's status / decided_by disagrees with the journal's decision record (or its absence). */
  | 'status_without_record'
  /** The journal records more than one decision: the service writes one at most. */
  | 'conflicting_decisions'
  | 'release_unreadable'
  /** A signed release in the releases hash that no `released` journal record accounts for. */
  | 'release_without_record';

export interface StateFinding {
  readonly code: StateFindingCode;
  /** One line naming the field and the user / step, for people. */
  readonly message: string;
}

/** A decision as the check read it (stored or journalled). */
export interface DecisionSummary {
  readonly status: DecisionStatus;
  readonly version: number | null;
  readonly by: string | null;
  /** The approved plan's digest (approvals only; null otherwise). */
  readonly planDigest: string | null;
}

/** `approved v2 by U0FIN3 (plan 6f7ac9167e16…)`, `expired v1 by timer`, `invalid`. */
export function describeDecision(decision: DecisionSummary): string {
  const version = decision.version === null ? '' : ` v${decision.version}`;
  const by = decision.by === null ? '' : ` by ${shown(decision.by)}`;
  const plan = decision.planDigest === null ? '' : ` (plan ${short(decision.planDigest)})`;
  return `${decision.status}${version}${by}${plan}`;
}

/** The first 12 hex digits of a digest, for messages. */
export function short(digest: string): string {
  return `${shown(digest.slice(0, 12))}…`;
}

/**
 * A stored value inside a message: as it is when it looks like an id, else JSON-quoted, so a value
 * written by hand (a user id with spaces or a line break) cannot blur or forge a report line.
 */
export function shown(text: string): string {
  return /^[\w.:@+-]{1,100}$/.test(text) ? text : JSON.stringify(text);
}

/** A finding whose message is one line whatever went into it (parser messages quote stored text). */
export function finding(code: StateFindingCode, message: string): StateFinding {
  const escaped = message.replace(
    /[\p{Cc}\p{Zl}\p{Zp}]/gu,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return { code, message: escaped };
}
