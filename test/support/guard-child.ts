/**
 * The process guard alone (test/main/malformed-requests.test.ts): installs it, then lets a promise
 * rejection and an exception escape every handler; prints what was reported and `alive` when the
 * process is still running after both.
 */
import { guardProcess } from '../../src/composition.ts';

guardProcess((error, context) => {
  process.stdout.write(`reported ${context}: ${error instanceof Error ? error.message : String(error)}\n`);
});
void Promise.reject(new Error('nobody caught this rejection'));
setTimeout(() => {
  throw new Error('nobody caught this exception');
}, 10);
setTimeout(() => process.stdout.write('alive\n'), 200);
