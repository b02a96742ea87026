/** Durations are read by the pipeline too (a plan's `expiresIn`); config re-exports them. */
export { formatDuration, parseDuration } from '../pipeline/duration.ts';
