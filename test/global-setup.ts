/**
 * Vitest globalSetup: gives every test file a Redis URL through `inject('redisUrl')`.
 *
 * - `TEST_REDIS_URL` set: that server is used as is. It is never flushed or stopped; tests clean up
 *   only their own key prefixes (see test/helpers/redis.ts).
 * - otherwise: a private in-memory redis-server on a free port, stopped after the run.
 */
import type { TestProject } from 'vitest/node';
import { startRedisServer } from '../src/devtools/redis-server.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** URL of the Redis the tests may use (shared by all test files: isolate by key prefix). */
    redisUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const external = process.env.TEST_REDIS_URL;
  if (external) {
    project.provide('redisUrl', external);
    return async () => {};
  }
  const server = await startRedisServer();
  project.provide('redisUrl', server.url);
  return () => server.stop();
}
