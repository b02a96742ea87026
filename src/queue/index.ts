/**
 * BullMQ: connections, queue names and job ids, the timers (expiry, escalation, reminders) with their
 * scheduler and boot-time reconciliation, and decision webhooks.
 */
export * from './connection.ts';
export * from './names.ts';
export * from './reconcile-timers.ts';
export * from './redis-outage.ts';
export * from './redis-readiness.ts';
export * from './render.ts';
export * from './shutdown.ts';
export * from './supervised-worker.ts';
export * from './timer-plan.ts';
export * from './timer-scheduler.ts';
export * from './timers.ts';
export * from './timers-worker.ts';
export * from './webhooks.ts';
