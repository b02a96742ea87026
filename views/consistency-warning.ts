/**
 * Consistency warnings on the diff message and the card: a step that still quotes a value an edit
 * changed ("`s3` still says "Friday 3 April"; `s2` now says Mon 6 Apr 2026"), with an "Edit s3" button
 * that opens the edit form at that step (action_id `edit`, its value naming the step).
 */
import type { SectionBlock } from '@slack/types';
import type { ArgPath, JsonObject, StaleQuote, Step } from '../src/pipeline/index.ts';
import { findStaleQuotes, humanizeKey, valueAt } from '../src/pipeline/index.ts';
import { argFields, formatArgValue } from './arg-fields.ts';
import { button, LIMITS, mrkdwn } from './blocks.ts';
import { encodeButtonValue } from './button-value.ts';
import { clipMrkdwn, escapeMrkdwn, joinWithinLimit, plural } from './mrkdwn.ts';
import { toolOf, type ViewConfig } from './view-config.ts';

/** At most this many stale steps get a section (and a button) of their own; the rest are listed in the last. */
export const MAX_WARNING_SECTIONS = 3;

interface PlanSteps {
  readonly plan: { readonly steps: readonly Step[] };
}

/**
 * Stale quotes in `current` of values changed since each of `earlier` (the version an edit was based on,
 * the agent's own version…), each (step, field, quote) once.
 */
export function staleQuotesSince(
  earlier: readonly PlanSteps[],
  current: PlanSteps,
  config: ViewConfig,
): StaleQuote[] {
  const seen = new Set<string>();
  const quotes: StaleQuote[] = [];
  for (const version of earlier) {
    const found = findStaleQuotes({
      before: version.plan,
      after: current.plan,
      tools: config.pipeline.tools,
    });
    for (const quote of found) {
      const key = JSON.stringify([quote.stepId, quote.path, quote.quoted.toLowerCase()]);
      if (seen.has(key)) continue;
      seen.add(key);
      quotes.push(quote);
    }
  }
  const order = new Map(current.plan.steps.map((step, index) => [step.id, index]));
  return quotes.sort((a, b) => (order.get(a.stepId) ?? 0) - (order.get(b.stepId) ?? 0));
}

/**
 * One section per step that still quotes a changed value (at most MAX_WARNING_SECTIONS), each with an
 * "Edit <step>" button while the version can be edited (`actionable`).
 * @example blocks.push(...consistencyWarningBlocks({ runId, version: 2, quotes, current, config, actionable: true }));
 */
export function consistencyWarningBlocks(input: {
  readonly runId: string;
  readonly version: number;
  readonly quotes: readonly StaleQuote[];
  readonly current: PlanSteps;
  readonly config: ViewConfig;
  readonly actionable: boolean;
  readonly tz?: string;
}): SectionBlock[] {
  const byStep = new Map<string, StaleQuote[]>();
  for (const quote of input.quotes) byStep.set(quote.stepId, [...(byStep.get(quote.stepId) ?? []), quote]);
  const steps = [...byStep];
  const shown = steps.length <= MAX_WARNING_SECTIONS ? steps : steps.slice(0, MAX_WARNING_SECTIONS - 1);
  const rest = steps.slice(shown.length);
  const sections = shown.map(([stepId, quotes]): SectionBlock => {
    const lines = quotes.map((quote) => warningLine(quote, input));
    return {
      type: 'section',
      text: mrkdwn(joinWithinLimit(lines, LIMITS.sectionText, (left) => `…and ${plural(left, 'more')}`)),
      ...(input.actionable
        ? {
            accessory: button({
              actionId: 'edit',
              text: `Edit ${stepId}`,
              // The cursor goes to the first field that still quotes the old value.
              value: encodeButtonValue({
                runId: input.runId,
                version: input.version,
                stepId,
                ...(quotes[0] !== undefined && quotes[0].path.join('.').length <= 200
                  ? { argPath: quotes[0].path.join('.') }
                  : {}),
              }),
            }),
          }
        : {}),
    };
  });
  if (rest.length > 0) {
    // At most 30 ids listed (ids are up to 64 characters; a config may allow long plans): the section
    // stays under its 3,000 characters.
    const listed = rest.slice(0, 30).map(([stepId]) => `\`${escapeMrkdwn(stepId)}\``);
    const ids = `${listed.join(', ')}${rest.length > listed.length ? ` and ${rest.length - listed.length} more` : ''}`;
    sections.push({
      type: 'section',
      // Formatted here (its step ids escaped above): clipping would escape the formatting too.
      text: mrkdwn(
        `⚠️ *${plural(rest.length, 'more step')} still quote${rest.length === 1 ? 's' : ''} a value this edit changed:* ${ids}. Edit the plan to check them.`,
      ),
    });
  }
  return sections;
}

/** "⚠️ `s3` still says "Friday 3 April" (Reply); `s2` now says Mon 6 Apr 2026 (New delivery date)." */
function warningLine(
  quote: StaleQuote,
  input: { readonly current: PlanSteps; readonly config: ViewConfig; readonly tz?: string },
): string {
  const quoting = input.current.plan.steps.find((step) => step.id === quote.stepId);
  const changed = input.current.plan.steps.find((step) => step.id === quote.changed.stepId);
  const where = quoting === undefined ? undefined : fieldLabel(input.config, quoting, quote.path);
  const what = changed === undefined ? undefined : fieldLabel(input.config, changed, quote.changed.path);
  const now = formatArgValue(quote.changed, quote.changed.after, {
    max: 100,
    ...(input.tz === undefined ? {} : { tz: input.tz }),
  });
  return [
    `⚠️ *\`${escapeMrkdwn(quote.stepId)}\` still says "${clipMrkdwn(quote.quoted, 100)}"*`,
    where === undefined ? '' : ` (${escapeMrkdwn(where)})`,
    `; \`${escapeMrkdwn(quote.changed.stepId)}\` now says ${now}`,
    what === undefined ? '' : ` (${escapeMrkdwn(what)})`,
    '. Check it before approving.',
  ].join('');
}

function fieldLabel(config: ViewConfig, step: Step, path: ArgPath): string | undefined {
  const tool = toolOf(config, step.tool);
  const field =
    tool === undefined ? undefined : argFields(tool.args, step.args as JsonObject).find(samePath(path));
  if (field !== undefined) return field.label;
  return valueAt(step.args, path) === undefined ? undefined : humanizeKey(String(path.at(-1) ?? ''));
}

function samePath(path: ArgPath) {
  return (field: { readonly path: ArgPath }) =>
    field.path.length === path.length && field.path.every((key, index) => key === path[index]);
}
