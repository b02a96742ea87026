/**
 * The last check before an effect (issue 19): the targets a step was approved against are read again
 * from the executor's own systems, and the step runs only if each is still at the version the
 * approvers saw. Reading is the executor's (`readVersion`); the comparison is the pipeline's
 * `checkPreconditions`. Fails closed: a read that throws or finds nothing refuses the step.
 */
import { checkPreconditions, type Precondition, type WorldChanged } from '../pipeline/index.ts';

/**
 * Reads an entity's version now from the system the step will change (an ETag, an `updated_at`, a
 * counter, as a string). Null or undefined: it does not exist any more. Throwing: it could not be read.
 */
export type ReadVersion = (entity: {
  readonly type: string;
  readonly id: string;
}) => string | null | undefined | Promise<string | null | undefined>;

/** What `checkWorld` answers: the world as approved, or the first target that moved. */
export type WorldCheck = { readonly ok: true } | WorldChanged;

/**
 * Reads every precondition's target now (in parallel) and compares it with the approved version.
 * Pass the `preconditions` of a passed `verifyStep`, or the verification itself.
 * @example
 * const world = await checkWorld(check, async ({ type, id }) => (await freight.get(type, id)).etag);
 * if (!world.ok) console.log(world.message); // delivery dl_55120 changed since it was approved (version 7 → 9): …
 */
export async function checkWorld(
  preconditions: readonly Precondition[] | { readonly preconditions: readonly Precondition[] },
  readVersion: ReadVersion,
): Promise<WorldCheck> {
  const list = 'preconditions' in preconditions ? preconditions.preconditions : preconditions;
  const reads = await Promise.allSettled(list.map(async ({ type, id }) => readVersion({ type, id })));
  for (const [index, read] of reads.entries()) {
    if (read.status === 'fulfilled') continue;
    const precondition = list[index] as Precondition;
    const error = read.reason instanceof Error ? read.reason.message : String(read.reason);
    return {
      ok: false,
      reason: 'world_changed',
      entity: { type: precondition.type, id: precondition.id },
      approvedVersion: precondition.version,
      currentVersion: null,
      message: `the current version of ${precondition.type} ${precondition.id} could not be read (${error}), so nobody can say it is still as approved (version ${precondition.version}): do not apply; try again, or preview again and ask for approval again`,
    };
  }
  const versions = new Map(
    list.map(({ type, id }, index) => {
      const read = reads[index];
      return [JSON.stringify([type, id]), read?.status === 'fulfilled' ? read.value : undefined];
    }),
  );
  return checkPreconditions(list, ({ type, id }) => versions.get(JSON.stringify([type, id])));
}
