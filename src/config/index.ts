export { choice, isoDate, longText, money, text } from '../pipeline/fields.ts';
export { formatMoney } from '../pipeline/money.ts';
export { rule } from '../pipeline/policy.ts';
export { defineTool } from '../pipeline/tool.ts';
export * from './define-config.ts';
export { formatDuration, parseDuration } from './duration.ts';
