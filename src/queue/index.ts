/** BullMQ: connections, queue names and job ids, the intake processor and worker, decision delivery. */
export * from './connection.ts';
export * from './decisions.ts';
export * from './intake.ts';
export * from './intake-worker.ts';
export * from './names.ts';
export * from './shutdown.ts';
