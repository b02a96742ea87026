/**
 * What a `preview` hook must answer, checked strictly: a change set is stored with the plan version
 * and shown to approvers, so a malformed one is refused (the step is left unverified), never repaired.
 */
import { z } from 'zod';
import type { ChangeSet } from './change-set.ts';
import { checkJsonValue } from './check-json-value.ts';

const MAX_TEXT = 2_000;
const MAX_ITEMS = 100;

const text = z.string().min(1).max(MAX_TEXT);
const machineName = z.string().min(1).max(200);

const entityRef = z.strictObject({
  type: machineName,
  id: machineName,
  label: text.optional(),
});

const changeSetSchema = z.strictObject({
  target: z.strictObject({
    type: machineName,
    id: machineName,
    label: text.optional(),
    version: z.string().min(1).max(MAX_TEXT),
  }),
  changes: z
    .array(
      z.strictObject({
        path: machineName,
        label: text,
        before: z.json(),
        after: z.json(),
        beforeText: text.optional(),
        afterText: text.optional(),
      }),
    )
    .max(MAX_ITEMS),
  related: z
    .array(
      z.strictObject({
        entity: entityRef,
        impact: z.enum(['read', 'write', 'event', 'unknown']),
        source: z.enum(['declared', 'observed']),
        note: text.optional(),
      }),
    )
    .max(MAX_ITEMS),
  invariants: z
    .array(
      z.strictObject({
        name: machineName,
        label: text,
        status: z.enum(['preserved', 'violated', 'unknown']),
        evidence: text.optional(),
      }),
    )
    .max(MAX_ITEMS),
});

/** The change set as answered, or what is wrong with it in plain words (at most three problems). */
export type ChangeSetCheck =
  | { readonly ok: true; readonly changeSet: ChangeSet }
  | { readonly ok: false; readonly reason: string };

/**
 * Checks a `preview` hook's answer against the ChangeSet shape (unknown keys refused).
 * @example checkChangeSet({ target: { type: 'delivery', id: 'dl_1' } }) // { ok: false, reason: 'target.version: …' }
 */
export function checkChangeSet(value: unknown): ChangeSetCheck {
  const parsed = changeSetSchema.safeParse(value);
  if (parsed.success) {
    // Stored with the plan and journaled (hashed as canonical JSON): the same JSON plans are held to —
    // whole numbers only (money in minor units), no -0, bounded depth.
    const json = checkJsonValue(parsed.data, { maxDepth: 12, maxStringLength: 10_000, maxProblems: 3 });
    if (!json.ok) return { ok: false, reason: json.problems.map((problem) => problem.message).join('; ') };
    return { ok: true, changeSet: parsed.data as ChangeSet };
  }
  const problems = parsed.error.issues.slice(0, 3).map((issue) => {
    const where = issue.path.reduce<string>(
      (path, key) =>
        typeof key === 'number' ? `${path}[${key}]` : path === '' ? String(key) : `${path}.${String(key)}`,
      '',
    );
    return where === '' ? issue.message : `${where}: ${issue.message}`;
  });
  const more = parsed.error.issues.length > 3 ? ` (and ${parsed.error.issues.length - 3} more)` : '';
  return { ok: false, reason: `${problems.join('; ')}${more}` };
}
