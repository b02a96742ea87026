/** MCP tool results: a JSON body as text, marked `isError` for every answer that is not a success. */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { isRequestError } from '../client/index.ts';

/** A successful answer: `body` as indented JSON text. */
export function answer(body: unknown): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(body, null, 2) }] };
}

/** A refusal or a "not approved": the model sees `isError` and the reason in the body. */
export function refusal(body: unknown): CallToolResult {
  return { ...answer(body), isError: true };
}

/** An error the call met (Countersign unreachable, a run that is not this agent's), as a tool error. */
export function failure(error: unknown): CallToolResult {
  if (isRequestError(error)) return refusal({ error: error.code, message: error.message });
  return refusal({
    error: 'internal_error',
    message: error instanceof Error ? error.message : String(error),
  });
}
