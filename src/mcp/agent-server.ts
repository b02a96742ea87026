/**
 * The MCP server (`npm run mcp`): Countersign's agent API as three MCP tools for one agent —
 * `submit_plan`, `get_decision` and `report_outcome` — over the agent client (src/client), so it
 * holds the agent's secret and nothing of the server's. `get_decision` fails closed: only a decision
 * whose receipt verifies against Countersign's keys answers `approved: true`.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import {
  type AgentClient,
  type Decision,
  isDecisionTimeoutError,
  isSubmissionError,
} from '../client/index.ts';
import type { ToolDefinition } from '../pipeline/index.ts';
import { type JsonSchema, submitPlanInputSchema } from './plan-schema.ts';
import { answer, failure, refusal } from './tool-result.ts';

/** The longest `get_decision` holds a call open, in seconds (the agent API's long poll). */
export const MAX_WAIT_SECONDS = 60;

export interface AgentServerOptions {
  readonly client: AgentClient;
  /** The deployment's tool registry (the config's `pipeline.tools`). */
  readonly registry: ReadonlyMap<string, ToolDefinition>;
  /** The tools this agent may plan to call (the config's `agents.<name>.tools`). */
  readonly agentTools: readonly string[];
  readonly version?: string;
}

const submitInput = z.strictObject({
  summary: z.string().optional(),
  context: z.record(z.string(), z.unknown()).optional(),
  steps: z.array(
    z.strictObject({ id: z.string().optional(), tool: z.string(), args: z.record(z.string(), z.unknown()) }),
  ),
  expires_in: z.string().optional(),
});
const decisionInput = z.strictObject({
  run_id: z.string().min(1),
  wait_seconds: z.number().min(0).max(MAX_WAIT_SECONDS).default(30),
});
const outcomeInput = z.strictObject({
  run_id: z.string().min(1),
  step_id: z.string().min(1),
  status: z.enum(['applying', 'applied', 'failed']),
  detail: z.string().optional(),
});

function toolList(
  options: AgentServerOptions,
): { name: string; description: string; inputSchema: JsonSchema }[] {
  return [
    {
      name: 'submit_plan',
      description:
        'Submit a plan — tool calls you have NOT run yet — for approval by people in Slack. Answers the run id and its status (pending, or approved when policy approves every step); a refused plan answers the phase and a message per step. Then call get_decision.',
      inputSchema: submitPlanInputSchema(options.registry, options.agentTools),
    },
    {
      name: 'get_decision',
      description: `Wait up to wait_seconds (0–${MAX_WAIT_SECONDS}, default 30) for a run's decision. Run the steps only when it answers approved: true, and then exactly the steps and args it lists (people may have edited them). Pending, rejected, expired and invalid all answer approved: false with the reason.`,
      inputSchema: {
        type: 'object',
        properties: {
          run_id: { type: 'string' },
          wait_seconds: { type: 'number', minimum: 0, maximum: MAX_WAIT_SECONDS, default: 30 },
        },
        required: ['run_id'],
        additionalProperties: false,
      },
    },
    {
      name: 'report_outcome',
      description:
        'Report a step of an approved run: "applying" right before running it (if this answers an error, do NOT run the step: it was claimed before), then "applied" or "failed" with a detail.',
      inputSchema: {
        type: 'object',
        properties: {
          run_id: { type: 'string' },
          step_id: { type: 'string' },
          status: { type: 'string', enum: ['applying', 'applied', 'failed'] },
          detail: { type: 'string', description: 'What happened (failed steps); at most 2,000 characters' },
        },
        required: ['run_id', 'step_id', 'status'],
        additionalProperties: false,
      },
    },
  ];
}

/** What a decision means to the model: approved with the steps to run, or not, with why. */
async function decisionAnswer(client: AgentClient, decision: Decision): Promise<CallToolResult> {
  const notApproved = (reason: string) =>
    refusal({
      approved: false,
      run_id: decision.runId,
      status: decision.status,
      reason,
      ...(decision.status === 'invalid' ? { phase: decision.phase, diagnostics: decision.diagnostics } : {}),
    });
  if (decision.status !== 'approved' || decision.plan === null) {
    return notApproved(decision.reason ?? `the run was ${decision.status}`);
  }
  const steps = [];
  for (const step of decision.plan.steps) {
    const check = await client.verifyStep(decision, step);
    if (!check.ok)
      return notApproved(`step ${step.id} failed verification (${check.reason}): ${check.message}`);
    steps.push({ id: step.id, tool: step.tool, args: step.args, provenance: check.provenance });
  }
  return answer({
    approved: true,
    run_id: decision.runId,
    status: decision.status,
    version: decision.version,
    decided_by: decision.decidedBy,
    steps,
  });
}

function invalidInput(tool: string, error: z.ZodError): CallToolResult {
  return refusal({ error: 'invalid_input', message: `${tool}: ${z.prettifyError(error)}` });
}

async function callTool(options: AgentServerOptions, name: string, input: unknown): Promise<CallToolResult> {
  const { client } = options;
  switch (name) {
    case 'submit_plan': {
      const parsed = submitInput.safeParse(input);
      if (!parsed.success) return invalidInput(name, parsed.error);
      const { summary, context, steps, expires_in: expiresIn } = parsed.data;
      try {
        const submitted = await client.submit({
          steps: steps.map(({ id, ...step }) => (id === undefined ? step : { id, ...step })),
          ...(summary === undefined ? {} : { summary }),
          ...(context === undefined ? {} : { context }),
          ...(expiresIn === undefined ? {} : { expiresIn }),
        });
        return answer({ run_id: submitted.runId, status: submitted.status });
      } catch (error) {
        if (!isSubmissionError(error)) return failure(error);
        return refusal({
          error: 'plan_refused',
          run_id: error.runId,
          phase: error.phase,
          diagnostics: error.diagnostics.map((d) => ({
            code: d.code,
            ...(d.stepId === undefined ? {} : { step_id: d.stepId }),
            ...(d.path === undefined ? {} : { path: d.path }),
            message: d.message,
          })),
        });
      }
    }
    case 'get_decision': {
      const parsed = decisionInput.safeParse(input);
      if (!parsed.success) return invalidInput(name, parsed.error);
      const { run_id: runId, wait_seconds: waitSeconds } = parsed.data;
      const pending = () =>
        refusal({ approved: false, run_id: runId, status: 'pending', reason: 'nobody has decided yet' });
      try {
        if (waitSeconds === 0) {
          const decision = await client.getDecision(runId);
          return decision === undefined ? pending() : await decisionAnswer(client, decision);
        }
        return await decisionAnswer(
          client,
          await client.waitForDecision(runId, { timeoutMs: waitSeconds * 1000 }),
        );
      } catch (error) {
        return isDecisionTimeoutError(error) ? pending() : failure(error);
      }
    }
    case 'report_outcome': {
      const parsed = outcomeInput.safeParse(input);
      if (!parsed.success) return invalidInput(name, parsed.error);
      const { run_id: runId, step_id: stepId, status, detail } = parsed.data;
      try {
        const report = await client.reportOutcome(runId, stepId, {
          status,
          ...(detail === undefined ? {} : { detail }),
        });
        return report.ok ? answer({ ok: true, outcome: report.outcome }) : refusal(report);
      } catch (error) {
        return failure(error);
      }
    }
    default:
      return refusal({ error: 'unknown_tool', message: `no tool ${name}` });
  }
}

/**
 * The MCP server for one agent; connect it to a transport (`StdioServerTransport` in `npm run mcp`).
 * @example await createAgentServer({ client, registry: config.pipeline.tools, agentTools }).connect(new StdioServerTransport());
 */
export function createAgentServer(options: AgentServerOptions): Server {
  const server = new Server(
    { name: 'countersign', version: options.version ?? '0.1.0' },
    { capabilities: { tools: {} } },
  );
  const tools = toolList(options);
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, (request) =>
    callTool(options, request.params.name, request.params.arguments ?? {}),
  );
  return server;
}
