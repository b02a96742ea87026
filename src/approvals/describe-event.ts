/**
 * One-line, human-readable summaries of journal events, for `npm run audit -- show` and logs. Pure.
 */
import {
  describeFieldPath,
  type FieldChange,
  type JsonValue,
  type PlanDiff,
  type Step,
} from '../pipeline/index.ts';
import type { JournalEvent } from './types.ts';

/** How many diff entries an `edited` line lists before summarising the rest as "… N more". */
const MAX_DIFF_PARTS = 8;
/** Longest rendering of one value inside a line. */
const MAX_VALUE_LENGTH = 40;

/**
 * A one-line summary of a journal event.
 *
 * @example
 * describeEvent({ type: 'refused', action: 'approve', version: 2, userId: 'U0OP2', reason: 'stale',
 *   detail: 'version 3 is current' }) // 'refused approve by U0OP2: version 3 is current'
 */
export function describeEvent(event: JournalEvent): string {
  switch (event.type) {
    case 'submitted':
      return `submitted by agent ${event.agent} (${byteLength(event.raw)} bytes${event.nonce === undefined ? '' : `, nonce ${event.nonce}`})`;
    case 'validated': {
      const steps = event.steps;
      const routes = countBy(steps.map((step) => step.route));
      return `validated v${event.version}: ${plural(steps.length, 'step')} (${routes})`;
    }
    case 'invalid': {
      const [first, ...rest] = event.diagnostics;
      if (first === undefined) return `invalid at ${event.phase}`;
      const where = first.stepId === undefined ? '' : `${first.stepId}: `;
      const more = rest.length === 0 ? '' : ` (+${rest.length} more)`;
      return `invalid at ${event.phase}: ${where}${first.code}: ${first.message}${more}`;
    }
    case 'submission_refused':
      return `submission refused: ${event.reason}`;
    case 'posted':
      return `posted v${event.version} to ${event.channel} (ts ${event.ts})`;
    case 'edited':
      return `edited by ${event.editor}: v${event.baseVersion} → v${event.version} (${describeDiff(event.diff)})`;
    case 'edit_refused':
      return `edit of v${event.baseVersion} by ${event.editor} refused: ${event.reason}`;
    case 'approval':
      return `approved by ${event.userId} (${plural(event.steps?.length ?? event.stepDigests?.length ?? 0, 'step')} of v${event.version})`;
    case 'approved':
      return `decision: approved v${event.version} (last approval by ${event.by}; plan ${short(event.planDigest)})`;
    case 'rejected':
      return `decision: rejected v${event.version} by ${event.userId}: ${event.reason}`;
    case 'escalated': {
      const notified =
        event.notified.length === 0 ? 'nobody notified' : `notified ${event.notified.join(', ')}`;
      const repeat = event.repeat === undefined ? '' : `, repeat ${event.repeat}`;
      return `escalated v${event.version} to level ${event.level}${repeat} (${notified})`;
    }
    case 'reminded':
      return `reminded the card's channel about v${event.version}`;
    case 'expired':
      return `decision: expired v${event.version}`;
    case 'refused': {
      const by = event.userId === undefined ? '' : ` by ${event.userId}`;
      return `refused ${event.action}${by}: ${event.detail === '' ? event.reason : event.detail}`;
    }
    case 'stale_timer':
      return `ignored ${event.timer} timer for v${event.version}: v${event.currentVersion} is current`;
    case 'decision_delivered':
      return `decision delivered to the agent (${event.status})`;
    case 'released':
      return `released ${event.stepId} of v${event.version} to the agent (step ${short(event.digest)})`;
    case 'outcome':
      return `outcome of ${event.stepId}: ${event.status}${event.detail === undefined ? '' : ` (${event.detail})`}`;
    default: {
      // Records written by a newer version of Countersign may carry events this one does not know.
      const unknown: { readonly type: string } = event;
      return `${unknown.type} (event unknown to this version)`;
    }
  }
}

/**
 * A plan diff in one line: `+1 added: s4 issue_refund; ~ s2.window 2026-04-03 → 2026-04-06`.
 * Entries follow the diff's order; long diffs end in "… N more".
 */
export function describeDiff(diff: PlanDiff<Step>): string {
  if (diff.isEmpty) return 'no changes';
  const parts: string[] = [];
  const added = diff.changes.flatMap((c) => (c.kind === 'added' ? [`${c.stepId} ${c.step.tool}`] : []));
  const removed = diff.changes.flatMap((c) => (c.kind === 'removed' ? [`${c.stepId} ${c.step.tool}`] : []));
  if (added.length > 0) parts.push(`+${added.length} added: ${added.join(', ')}`);
  if (removed.length > 0) parts.push(`-${removed.length} removed: ${removed.join(', ')}`);
  for (const change of diff.changes) {
    if (change.kind === 'changed') {
      if (change.toolChanged)
        parts.push(`~ ${change.stepId} tool ${change.before.tool} → ${change.after.tool}`);
      for (const field of change.fields) parts.push(describeFieldChange(change.stepId, field));
      if (change.dependenciesChanged)
        parts.push(
          `~ ${change.stepId} depends on ${dependencyList(change.before.dependsOn)} → ${dependencyList(change.after.dependsOn)}`,
        );
      if (change.moved) parts.push(`↕ ${change.stepId} position ${change.from + 1} → ${change.to + 1}`);
    } else if (change.kind === 'moved') {
      parts.push(`↕ ${change.stepId} position ${change.from + 1} → ${change.to + 1}`);
    }
  }
  if (parts.length <= MAX_DIFF_PARTS) return parts.join('; ');
  return `${parts.slice(0, MAX_DIFF_PARTS).join('; ')}; … ${parts.length - MAX_DIFF_PARTS} more`;
}

function dependencyList(ids: readonly string[] | undefined): string {
  return ids === undefined || ids.length === 0 ? '(nothing)' : ids.join(', ');
}

function describeFieldChange(stepId: string, field: FieldChange): string {
  const path = describeFieldPath(field.path);
  const where = path === '' || path.startsWith('[') ? `${stepId}${path}` : `${stepId}.${path}`;
  switch (field.kind) {
    case 'added':
      return `+ ${where} ${showValue(field.after)}`;
    case 'removed':
      return `- ${where} (was ${showValue(field.before)})`;
    case 'changed':
      return `~ ${where} ${showValue(field.before)} → ${showValue(field.after)}`;
  }
}

/** Strings bare (they read best in a line of prose), everything else as compact JSON; cut to fit. */
function showValue(value: JsonValue): string {
  const text = typeof value === 'string' ? (value === '' ? '""' : value) : JSON.stringify(value);
  const oneLine = text.replace(/\s+/g, ' ');
  return oneLine.length > MAX_VALUE_LENGTH ? `${oneLine.slice(0, MAX_VALUE_LENGTH - 1)}…` : oneLine;
}

function countBy(kinds: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const kind of kinds) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  return [...counts].map(([kind, count]) => `${count} ${kind}`).join(', ');
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

function short(digest: string): string {
  return `${digest.slice(0, 12)}…`;
}

function byteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}
