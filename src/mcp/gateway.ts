/**
 * The MCP gateway (`npm run mcp -- --gateway <command…>`): serves a downstream MCP server's tools
 * upstream, and turns every tools/call into a one-step plan of `mcp_call` (src/config/mcp-call.ts)
 * submitted as the gateway's agent. The policy decides: an auto-approved call is forwarded at once, a
 * reviewed one once people approve it in Slack — with the arguments they approved, which may be
 * edited — and a blocked, rejected, expired or unanswered one is answered with an error and never
 * forwarded. A blocked call is refused at submission (`ifBlocked: 'refuse'`), so it posts no card; a
 * call the client cancels stops waiting and is never forwarded, even if approved later. Forwarding follows the executor's protocol: verify the receipt, claim the step, report.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import {
  type AgentClient,
  type Decision,
  isDecisionTimeoutError,
  isSubmissionError,
  isWaitAbortedError,
} from '../client/index.ts';
import { MCP_CALL_TOOL, MCP_HINTS, parseMcpArguments } from '../config/mcp-call.ts';
import { canonicalJson, type JsonObject } from '../pipeline/index.ts';
import { failure, refusal } from './tool-result.ts';

export interface GatewayOptions {
  /** Countersign, as the gateway's agent. */
  readonly client: AgentClient;
  /** The downstream MCP server, connected. */
  readonly downstream: Client;
  /** How long a call waits for people; its plan expires then too. */
  readonly waitMs: number;
  /** One line per call that waits for people, naming its run (stderr in `npm run mcp`). */
  readonly log?: (line: string) => void;
  readonly version?: string;
}

/** The annotations the downstream server declared for `tool` (booleans only), as policy sees them. */
export function declaredAnnotations(tool: Tool): Record<string, boolean> {
  const annotations = (tool.annotations ?? {}) as Record<string, unknown>;
  return Object.fromEntries(
    MCP_HINTS.flatMap((hint) => (typeof annotations[hint] === 'boolean' ? [[hint, annotations[hint]]] : [])),
  );
}

/** Every tool the downstream server lists, all pages. */
async function listAll(downstream: Client): Promise<Tool[]> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  do {
    const page = await downstream.listTools(cursor === undefined ? {} : { cursor });
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return tools;
}

const notRun = (body: Record<string, unknown>) => refusal({ ...body, forwarded: false });
const cancelled = (runId: string) =>
  notRun({
    error: 'cancelled',
    run_id: runId,
    reason: 'the client cancelled the call before it was decided',
  });

/** Why the approved step cannot be forwarded as a call of `name` with `annotations`, if it cannot. */
function approvedCall(
  decision: Decision,
  name: string,
  annotations: Record<string, boolean>,
):
  | { ok: true; stepId: string; arguments: JsonObject; argumentsText: string }
  | { ok: false; reason: string } {
  const steps = decision.plan?.steps ?? [];
  const step = steps[0];
  if (steps.length !== 1 || step === undefined || step.tool !== MCP_CALL_TOOL) {
    return { ok: false, reason: `the approved plan is not one ${MCP_CALL_TOOL} step` };
  }
  if (step.args.tool !== name) {
    return { ok: false, reason: `the approved call is of ${String(step.args.tool)}, not ${name}` };
  }
  const approvedHints = step.args.annotations as JsonObject;
  if (canonicalJson(approvedHints) !== canonicalJson(annotations)) {
    return { ok: false, reason: `the approved annotations are not the ones ${name} declares` };
  }
  const argumentsText = String(step.args.arguments);
  const parsed = parseMcpArguments(argumentsText);
  return parsed.ok
    ? { ok: true, stepId: step.id, arguments: parsed.arguments, argumentsText }
    : { ok: false, reason: parsed.message };
}

/**
 * The gateway as an MCP server; connect it to a transport (stdio in `npm run mcp -- --gateway`).
 * @example await createGatewayServer({ client, downstream, waitMs: 600_000 }).connect(new StdioServerTransport());
 */
export function createGatewayServer(options: GatewayOptions): Server {
  const { client, downstream, waitMs } = options;
  const server = new Server(
    { name: 'countersign-gateway', version: options.version ?? '0.1.0' },
    { capabilities: { tools: {} } },
  );
  let known = new Map<string, Tool>();
  const lookUp = async (name: string): Promise<Tool | undefined> => {
    if (!known.has(name)) known = new Map((await listAll(downstream)).map((tool) => [tool.name, tool]));
    return known.get(name);
  };

  server.setRequestHandler(ListToolsRequestSchema, async (request) => {
    const page = await downstream.listTools(request.params ?? {});
    for (const tool of page.tools) known.set(tool.name, tool);
    return page;
  });

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const { name } = request.params;
    const requested = (request.params.arguments ?? {}) as JsonObject;
    try {
      const tool = await lookUp(name);
      if (tool === undefined)
        return notRun({ error: 'unknown_tool', message: `the server has no tool ${name}` });
      const annotations = declaredAnnotations(tool);

      let runId: string;
      let pending: boolean;
      try {
        const submitted = await client.submit({
          summary: `MCP call: ${tool.title ?? tool.annotations?.title ?? name}`,
          steps: [
            {
              id: 's1',
              tool: MCP_CALL_TOOL,
              args: { tool: name, arguments: JSON.stringify(requested), annotations },
            },
          ],
          expiresIn: `${Math.max(1, Math.ceil(waitMs / 1000))}s`,
          // A call policy blocks is refused at submission: no card for a call that can never run.
          ifBlocked: 'refuse',
        });
        runId = submitted.runId;
        pending = submitted.status === 'pending';
      } catch (error) {
        if (!isSubmissionError(error)) throw error;
        const blocked = error.diagnostics.filter((d) => d.code === 'blocked');
        if (blocked.length > 0) {
          return notRun({
            error: 'blocked',
            run_id: error.runId,
            message: `policy blocks calls of ${name}`,
            reason: blocked.map((d) => d.message).join('; '),
          });
        }
        return notRun({
          error: 'refused',
          phase: error.phase,
          diagnostics: error.diagnostics.map((d) => d.message),
        });
      }

      if (pending) options.log?.(`${name}: run ${runId} waits for approval in Slack`);
      // Progress notifications keep a client's request timeout from firing while people decide.
      const progressToken = request.params._meta?.progressToken;
      let beats = 0;
      const heartbeat =
        progressToken === undefined
          ? undefined
          : setInterval(() => {
              beats++;
              void extra
                .sendNotification({
                  method: 'notifications/progress',
                  params: { progressToken, progress: beats, message: `waiting for approval of run ${runId}` },
                })
                .catch(() => undefined);
            }, 10_000);
      let decision: Decision;
      try {
        // A cancelled tools/call stops waiting: whatever people decide later, it is never forwarded.
        decision = await client.waitForDecision(runId, { timeoutMs: waitMs, signal: extra.signal });
      } catch (error) {
        if (isWaitAbortedError(error)) return cancelled(runId);
        if (!isDecisionTimeoutError(error)) throw error;
        return notRun({
          error: 'not_approved',
          run_id: runId,
          status: 'pending',
          reason: 'nobody decided in time',
        });
      } finally {
        if (heartbeat !== undefined) clearInterval(heartbeat);
      }
      if (decision.status !== 'approved') {
        return notRun({
          error: 'not_approved',
          run_id: runId,
          status: decision.status,
          reason: decision.reason ?? `the call was ${decision.status}`,
        });
      }

      const step = decision.plan?.steps[0];
      const verified = step === undefined ? undefined : await client.verifyStep(decision, step);
      if (verified === undefined || !verified.ok) {
        const reason = verified === undefined ? 'no step' : `${verified.reason}: ${verified.message}`;
        return notRun({ error: 'not_verified', run_id: runId, reason });
      }
      const call = approvedCall(decision, name, annotations);
      if (!call.ok) return notRun({ error: 'not_forwarded', run_id: runId, reason: call.reason });

      if (extra.signal.aborted) return cancelled(runId);
      const claim = await client.reportOutcome(runId, call.stepId, { status: 'applying' });
      if (!claim.ok) return notRun({ error: 'not_claimed', run_id: runId, reason: claim.message });
      let result: CallToolResult;
      try {
        result = (await downstream.callTool({ name, arguments: call.arguments })) as CallToolResult;
      } catch (error) {
        await client.reportOutcome(runId, call.stepId, { status: 'failed', detail: String(error) });
        throw error;
      }
      await client.reportOutcome(
        runId,
        call.stepId,
        result.isError === true
          ? { status: 'failed', detail: JSON.stringify(result.content) }
          : { status: 'applied' },
      );
      if (call.argumentsText === JSON.stringify(requested)) return result;
      // Tell the model that what ran is not what it asked for.
      const note = `Countersign: ${decision.decidedBy ?? 'a person'} approved this call with edited arguments: ${JSON.stringify(call.arguments)}`;
      return { ...result, content: [...result.content, { type: 'text', text: note }] };
    } catch (error) {
      return failure(error);
    }
  });
  return server;
}
