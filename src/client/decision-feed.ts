/**
 * `onDecision`'s consumer of the agent's decision feed (`GET /v1/decisions`, docs/http-api.md): long
 * polls from a cursor, hands each decision to the handler — again, with backoff, while it throws —
 * and only then moves the cursor past it. At least once: the feed may repeat entries, and a cursor
 * saved before a crash replays what came after it; within one consumer a run's decision is handled
 * once.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Decision } from '../pipeline/index.ts';
import { isClientClosedError } from './errors.ts';

/**
 * Where the feed's cursor survives the agent's restarts. `load` answers undefined the first time
 * (read from the oldest decision the server keeps); `save` is called after each handled decision.
 */
export interface CursorStore {
  load(): Promise<string | undefined>;
  save(cursor: string): Promise<void>;
}

/**
 * A cursor kept in a file, written atomically (a temporary file renamed over it), so a crash leaves
 * the old cursor or the new one, never half of one.
 * @example const stop = client.onDecision(handle, { cursor: fileCursor('/var/lib/freight-agent/decisions.cursor') });
 */
export function fileCursor(path: string): CursorStore {
  return {
    async load() {
      try {
        const text = (await readFile(path, 'utf8')).trim();
        return text === '' ? undefined : text;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw error;
      }
    },
    async save(cursor) {
      await mkdir(dirname(path), { recursive: true });
      const temporary = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
      try {
        const file = await open(temporary, 'w', 0o600);
        try {
          await file.writeFile(`${cursor}\n`, 'utf8');
          await file.sync(); // on disk before the rename makes it the cursor
        } finally {
          await file.close();
        }
        await rename(temporary, path);
      } catch (error) {
        await rm(temporary, { force: true });
        throw error;
      }
    },
  };
}

export type DecisionHandler = (decision: Decision) => Promise<void> | void;

export interface FeedPage {
  readonly decisions: readonly { readonly cursor: string; readonly decision: Decision }[];
  readonly cursor: string;
}

export interface FeedDeps {
  /** One long poll of the feed after `after`; rejects with the signal's reason when stopped. */
  readonly read: (after: string | undefined, signal: AbortSignal) => Promise<FeedPage>;
  readonly handler: DecisionHandler;
  readonly cursor: CursorStore | undefined;
  readonly onError: (error: unknown) => void;
  /** The n-th backoff (from 1); rejects with the signal's reason when stopped. */
  readonly pause: (failures: number, signal: AbortSignal) => Promise<void>;
  /** An empty page answered sooner than this was not held by the server: pause before the next poll. */
  readonly earlyAnswerMs: number;
}

/** How many handled run ids one consumer remembers to skip repeats. */
const REMEMBERED_RUNS = 10_000;

class Stopped extends Error {}

/** Starts the consumer; `stop` ends the poll at once, lets a running handler finish, and resolves after. */
export function consumeDecisions(deps: FeedDeps): { stop: () => Promise<void> } {
  const controller = new AbortController();
  const signal = controller.signal;
  const handled = new Set<string>();
  const stopped = (error: unknown): boolean =>
    signal.aborted || error instanceof Stopped || isClientClosedError(error);

  /** Runs `task` until it succeeds, reporting each failure and backing off; Stopped when stopped. */
  const persist = async <T>(task: () => Promise<T>): Promise<T> => {
    for (let failures = 1; ; failures++) {
      if (signal.aborted) throw new Stopped();
      try {
        return await task();
      } catch (error) {
        if (stopped(error)) throw new Stopped();
        deps.onError(error);
        await deps.pause(failures, signal).catch(() => {
          throw new Stopped();
        });
      }
    }
  };

  const save = async (cursor: string): Promise<void> => {
    try {
      await deps.cursor?.save(cursor);
    } catch (error) {
      // Not fatal: the decisions after the saved cursor are handled again after a restart.
      deps.onError(error);
    }
  };

  const run = async (): Promise<void> => {
    let cursor = deps.cursor === undefined ? undefined : await persist(() => deps.cursor!.load());
    for (let early = 0; ; ) {
      const started = performance.now();
      const page = await persist(() => deps.read(cursor, signal));
      const empty = page.decisions.length === 0 && performance.now() - started < deps.earlyAnswerMs;
      early = empty ? early + 1 : 0;
      if (early > 0) {
        // A server (or a proxy) that answers without holding the poll must not be polled in a tight loop.
        await deps.pause(early, signal).catch(() => {
          throw new Stopped();
        });
      }
      for (const entry of page.decisions) {
        const { runId } = entry.decision;
        if (!handled.has(runId)) {
          await persist(async () => deps.handler(entry.decision));
          remember(handled, runId);
        }
        cursor = entry.cursor;
        await save(cursor);
      }
      if (page.cursor !== cursor) {
        cursor = page.cursor;
        await save(cursor);
      }
    }
  };

  const done = run().catch((error: unknown) => {
    if (!(error instanceof Stopped)) deps.onError(error);
  });
  return {
    stop: async () => {
      controller.abort(new Stopped('the decision consumer was stopped'));
      await done;
    },
  };
}

function remember(handled: Set<string>, runId: string): void {
  handled.add(runId);
  if (handled.size > REMEMBERED_RUNS) {
    const oldest = handled.values().next();
    if (oldest.done !== true) handled.delete(oldest.value);
  }
}
