/** The wire protocol agents and Countersign share: request signing and the HTTP bodies (docs/http-api.md). */
export * from './auth.ts';
export * from './wire.ts';
