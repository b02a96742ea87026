/** Learning from edits (issue 20): run histories from journals, edit statistics, recurring edits, outcomes by authorship, the report. */
export * from './attribution.ts';
export * from './edit-patterns.ts';
export * from './edit-stats.ts';
export * from './report.ts';
export * from './run-history.ts';
export * from './tool-fields.ts';
