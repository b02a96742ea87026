import type { RunView } from '../src/approvals/types.ts';
import { clipMrkdwn, quoteLines } from './mrkdwn.ts';
import { type PeopleNames, peopleList, person } from './people.ts';
import { formatInstant } from './time.ts';

/** The parts of a run that say whether a message about one of its versions is still live. */
export type RunLifecycle = Pick<RunView, 'status' | 'version' | 'decidedBy' | 'decidedAt' | 'reason'> &
  Partial<Pick<RunView, 'approvedBy' | 'released'>>;

/** Whether buttons for `shownVersion` can still do anything: the run is pending at that version. */
export function isActionable(run: RunLifecycle, shownVersion: number): boolean {
  return run.status === 'pending' && run.version === shownVersion;
}

/**
 * Who decided, named when it is a person (not the expiry timer or the policy); for an approval,
 * everyone whose approval counted ("by Dana Ortiz, Fay Chen and Ravi Nair"), not only the last click.
 */
function decidedBy(run: RunLifecycle, names: PeopleNames | undefined): string {
  if (run.status === 'approved' && run.approvedBy !== undefined && run.approvedBy.length > 0)
    return ` by ${peopleList(run.approvedBy, names, { max: 10 })}`;
  return run.decidedBy !== undefined && /^[UW][A-Z0-9]+$/.test(run.decidedBy)
    ? ` by ${person(run.decidedBy, names)}`
    : '';
}

/**
 * What became of the version a message shows, as mrkdwn, or undefined while it is current and
 * pending: superseded ("Superseded by version 3 — see the thread"), approved, rejected with the
 * reason, expired (nothing was executed) or invalid — with who and when.
 */
export function lifecycleText(
  run: RunLifecycle,
  shownVersion: number,
  time: { readonly now?: number; readonly tz?: string } = {},
  names?: PeopleNames,
): string | undefined {
  if (shownVersion < run.version) {
    const then = run.status === 'pending' ? '' : ` (${run.status})`;
    return `⏭️ *Superseded by version ${run.version}*${then} — see the thread. Buttons here no longer act.`;
  }
  const at = run.decidedAt === undefined ? '' : ` at ${formatInstant(run.decidedAt, time)}`;
  const reason = run.reason === undefined ? '' : `\n${quoteLines(clipMrkdwn(run.reason, 1500))}`;
  // Steps released before the decision may have run: the message lists them (views/releases.ts).
  const nothing = Object.keys(run.released ?? {}).length === 0;
  switch (run.status) {
    case 'pending':
      return undefined;
    case 'approved':
      return `✅ *Approved*${decidedBy(run, names)}${at}. The agent may now run these steps.`;
    case 'rejected':
      return `❌ *Rejected*${decidedBy(run, names)}${at} — ${nothing ? 'nothing' : 'no other step'} will be executed.${reason}`;
    case 'expired':
      return `⌛ *Expired*${at} — ${nothing ? 'nothing was executed' : 'no other step will be executed'}.`;
    case 'invalid':
      return `🚫 *Invalid* — the plan was refused${at}; nothing was executed.${reason}`;
  }
}
