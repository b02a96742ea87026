import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import freight from '../../examples/freight/countersign.config.ts';
import {
  ConfigError,
  type ConfigInput,
  defineConfig,
  isConfigError,
  resolveSecret,
} from '../../src/config/index.ts';
import { choice, money, text } from '../../src/pipeline/fields.ts';
import { type PolicyRule, rule } from '../../src/pipeline/policy.ts';
import { defineTool } from '../../src/pipeline/tool.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

const issueRefund = defineTool({
  name: 'issue_refund',
  title: 'Issue refund',
  effect: 'irreversible',
  args: z.strictObject({ invoice_id: text(), amount: money() }),
});
const addNote = defineTool({
  name: 'add_note',
  title: 'Add internal note',
  effect: 'write',
  args: z.strictObject({ ticket_id: text(), note: text() }),
});
const holdShipment = defineTool({
  name: 'hold_shipment',
  title: 'Hold shipment',
  effect: 'write',
  args: z.strictObject({ shipment: text(), reason: choice(['damaged', 'late']) }),
});

/** A small valid config; each test changes one thing. */
function config(overrides: Partial<ConfigInput> = {}): ConfigInput {
  return {
    tools: [issueRefund, addNote, holdShipment],
    agents: {
      ops: {
        tools: ['issue_refund', 'add_note', 'hold_shipment'],
        channel: 'C0OPS',
        secret: 'an-inline-test-secret',
      },
    },
    groups: { operators: ['U0OP1', 'U0OP2'], finance: ['U0FIN1', 'U0FIN2'], leads: ['U0LEAD1'] },
    policy: [
      rule(addNote, { route: 'auto' }),
      rule(issueRefund, {
        when: (args) => args.amount > 50_000,
        route: 'review',
        approvers: 'finance',
        approvals: 2,
      }),
      rule(issueRefund, { route: 'review', approvers: 'finance' }),
      { tool: 'hold_shipment', route: 'review', approvers: 'operators' },
    ],
    authoring: { operators: ['hold_shipment', 'add_note'], finance: '*' },
    ...overrides,
  };
}

/** The problems `defineConfig` reports for `input`; fails the test if it accepts it. */
function problemsOf(input: ConfigInput): readonly string[] {
  try {
    defineConfig(input);
  } catch (error) {
    if (isConfigError(error)) return error.problems;
    throw error;
  }
  throw new Error('expected defineConfig to refuse this config');
}

/** For configs a TypeScript user could not write but a JavaScript one could. */
const untyped = (input: unknown) => input as ConfigInput;

describe('defineConfig: the freight example', () => {
  it('loads, with its tools, agent and groups', () => {
    expect([...freight.pipeline.tools.keys()]).toEqual([
      'reschedule_delivery',
      'issue_refund',
      'send_reply',
      'add_note',
    ]);
    expect(freight.pipeline.agents).toEqual({
      'freight-ops': { tools: ['reschedule_delivery', 'issue_refund', 'send_reply', 'add_note'] },
    });
    expect(freight.agents['freight-ops']).toMatchObject({
      channel: 'C0OPS',
      secret: { env: 'FREIGHT_AGENT_SECRET' },
    });
    expect(freight.groups.finance).toEqual(['U0FIN1', 'U0FIN2', 'U0FIN3']);
  });

  it('resolves its escalation chain to milliseconds and the people to notify', () => {
    expect(freight.escalation['freight-ops']).toEqual({
      levels: [
        {
          afterMs: 15 * MINUTE,
          notify: ['U0LEAD1'],
          group: 'leads',
          may: { approve: ['operators'], counts: 'member', irreversible: true },
        },
        {
          afterMs: HOUR,
          notify: ['U0LEAD1'],
          group: 'leads',
          channel: 'C0ESCALATE',
          may: { approve: ['operators', 'finance'], counts: 'member', irreversible: true },
        },
      ],
      repeat: { times: 2, everyMs: HOUR },
    });
  });

  it('resolves its defaults, filling in what it leaves out', () => {
    expect(freight.defaults).toEqual({
      expiresInMs: 24 * HOUR,
      agentExpiresInMs: {},
      rateLimit: { requests: 600, perMs: MINUTE },
      agentRateLimits: {},
      maxExpiresInMs: 7 * 24 * HOUR,
      uncertainAfterMs: 15 * MINUTE,
    });
    expect(freight.pipeline.maxExpiresInMs).toBe(7 * 24 * HOUR);
    expect(freight.pipeline.limits).toEqual({
      maxPlanBytes: 262_144,
      maxSteps: 50,
      maxStringLength: 10_000,
      maxDepth: 12,
    });
  });

  it('gives operators the tools they may author and finance and leads every tool', () => {
    expect(freight.pipeline.authoring).toEqual({
      operators: ['reschedule_delivery', 'send_reply', 'add_note'],
      finance: ['*'],
      leads: ['*'],
    });
  });

  it('has a policy digest in lower-case hex', () => {
    expect(freight.digest).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('defineConfig: a valid config', () => {
  it('is accepted with the defaults filled in and no escalation', () => {
    const loaded = defineConfig(config());
    expect(loaded.defaults).toEqual({
      expiresInMs: 24 * HOUR,
      agentExpiresInMs: {},
      rateLimit: { requests: 600, perMs: MINUTE },
      agentRateLimits: {},
      maxExpiresInMs: 7 * 24 * HOUR,
      uncertainAfterMs: 15 * MINUTE,
    });
    expect(loaded.escalation).toEqual({});
    expect(loaded.pipeline.policy).toHaveLength(4);
  });

  it('keeps explicit Slack ids to notify and a reminder before the first level', () => {
    const loaded = defineConfig(
      config({
        escalation: {
          ops: {
            levels: [
              { after: '30m', notify: ['U0LEAD1', 'U0OP1'] },
              { after: '2h', notify: 'leads', channel: 'C0ESC' },
            ],
            reminder: { after: '10m' },
          },
        },
      }),
    );
    expect(loaded.escalation.ops).toEqual({
      levels: [
        { afterMs: 30 * MINUTE, notify: ['U0LEAD1', 'U0OP1'] },
        { afterMs: 2 * HOUR, notify: ['U0LEAD1'], group: 'leads', channel: 'C0ESC' },
      ],
      reminderAfterMs: 10 * MINUTE,
    });
  });

  it('merges partial plan limits over the defaults', () => {
    const loaded = defineConfig(config({ defaults: { limits: { maxSteps: 10 } } }));
    expect(loaded.pipeline.limits).toMatchObject({ maxSteps: 10, maxPlanBytes: 262_144 });
  });
});

describe('defineConfig: start-up errors', () => {
  it('refuses an unknown tool on an agent allowlist', () => {
    const agents = {
      ops: { tools: ['issue_refund', 'refund_everything'], channel: 'C0OPS', secret: 'x'.repeat(16) },
    };
    expect(problemsOf(config({ agents }))).toEqual(['agents.ops.tools: unknown tool "refund_everything"']);
  });

  it("refuses '*' on an agent allowlist", () => {
    const agents = { ops: { tools: ['*'], channel: 'C0OPS', secret: 'x'.repeat(16) } };
    expect(problemsOf(config({ agents }))).toEqual([
      "agents.ops.tools: list tools by name ('*' is not allowed here)",
    ]);
  });

  it("refuses an unknown group in a policy rule's approvers", () => {
    const policy = [
      { name: 'refunds', tool: 'issue_refund', route: 'review' as const, approvers: 'accounting' },
    ];
    expect(problemsOf(config({ policy }))).toEqual(['policy[0] (refunds): unknown group "accounting"']);
  });

  it('refuses an unknown tool in a policy rule, naming the rule by position when it has no name', () => {
    const policy = [{ tool: ['add_note', 'delete_ticket'], route: 'auto' as const }];
    expect(problemsOf(config({ policy }))).toEqual([
      'policy[0] (add_note,delete_ticket#1): unknown tool "delete_ticket"',
    ]);
  });

  it('refuses a review rule without approvers', () => {
    const policy = [{ tool: 'issue_refund', route: 'review' as const }];
    expect(problemsOf(config({ policy }))).toEqual([
      'policy[0] (issue_refund#1): a review rule needs approvers (a group name)',
    ]);
  });

  it('refuses approvers on a rule that does not review', () => {
    const policy = [{ tool: 'add_note', route: 'auto' as const, approvers: 'operators' }];
    expect(problemsOf(config({ policy }))).toEqual([
      "policy[0] (add_note#1): approvers/approvals only apply to route 'review'",
    ]);
  });

  it('refuses a rule needing more approvals than the group has people', () => {
    const policy = [{ tool: 'issue_refund', route: 'review' as const, approvers: 'finance', approvals: 3 }];
    expect(problemsOf(config({ policy }))).toEqual([
      'policy[0] (issue_refund#1): needs 3 approvals but group finance has 2 distinct member(s)',
    ]);
  });

  it('counts a person listed twice in a group once towards the approvals a rule needs', () => {
    const groups = { operators: ['U0OP1'], finance: ['U0FIN1', 'U0FIN1'], leads: ['U0LEAD1'] };
    const policy = [{ tool: 'issue_refund', route: 'review' as const, approvers: 'finance', approvals: 2 }];
    expect(problemsOf(config({ groups, policy }))).toEqual([
      'policy[0] (issue_refund#1): needs 2 approvals but group finance has 1 distinct member(s)',
    ]);
  });

  it('refuses zero approvals', () => {
    const policy = [{ tool: 'issue_refund', route: 'review' as const, approvers: 'finance', approvals: 0 }];
    expect(problemsOf(config({ policy }))).toEqual([
      'policy[0].approvals: Too small: expected number to be >=1',
    ]);
  });

  it('refuses an unknown group in authoring', () => {
    expect(problemsOf(config({ authoring: { ops_team: ['add_note'] } }))).toEqual([
      'authoring: unknown group "ops_team"',
    ]);
  });

  it('refuses an unknown tool in authoring', () => {
    expect(problemsOf(config({ authoring: { operators: ['add_note', 'add_notes'] } }))).toEqual([
      'authoring.operators: unknown tool "add_notes"',
    ]);
  });

  it('refuses two tools with the same name', () => {
    const duplicate = defineTool({ ...addNote, title: 'Another note tool' });
    expect(problemsOf(config({ tools: [issueRefund, addNote, holdShipment, duplicate] }))).toEqual([
      'tools: add_note is defined twice',
    ]);
  });

  it('refuses an inline secret shorter than 16 characters', () => {
    const agents = { ops: { tools: ['add_note'], channel: 'C0OPS', secret: 'hunter2' } };
    expect(problemsOf(config({ agents }))).toEqual(['agents.ops.secret: must be at least 16 characters']);
  });

  it('never repeats a secret in its messages', () => {
    const agents = { ops: { tools: ['add_note'], channel: 'C0OPS', secret: 'hunter2' } };
    expect(problemsOf(config({ agents })).join('\n')).not.toContain('hunter2');
  });

  it('refuses an environment secret source with no variable name', () => {
    const agents = { ops: { tools: ['add_note'], channel: 'C0OPS', secret: { env: '' } } };
    expect(problemsOf(config({ agents }))).toEqual([
      'agents.ops.secret.env: Too small: expected string to have >=1 characters',
    ]);
  });

  it('refuses Slack ids that are not Slack ids, wherever they appear', () => {
    const problems = problemsOf(
      config({
        agents: { ops: { tools: ['add_note'], channel: '#ops', secret: 'x'.repeat(16) } },
        groups: { operators: ['U0OP1', 'u0op2'], finance: ['U0FIN1', 'U0FIN2'], leads: ['U0LEAD1'] },
        escalation: { ops: { levels: [{ after: '15m', notify: ['@lead'], channel: 'escalations' }] } },
      }),
    );
    const hint = 'must be a Slack id such as U024BE7LH or C0OPS';
    expect(problems).toEqual([
      `agents.ops.channel: ${hint}`,
      `groups.operators[1]: ${hint}`,
      `escalation.ops.levels[0].notify[0]: ${hint}`,
      `escalation.ops.levels[0].channel: ${hint}`,
    ]);
  });

  it('refuses agent and group names that could not appear in a plan or a message', () => {
    const problems = problemsOf(
      config({
        agents: { 'freight ops': { tools: ['add_note'], channel: 'C0OPS', secret: 'x'.repeat(16) } },
        groups: { 'the leads': ['U0LEAD1'], operators: ['U0OP1'], finance: ['U0FIN1', 'U0FIN2'] },
        authoring: { operators: '*' },
      }),
    );
    expect(problems).toEqual([
      'agents.freight ops: agent names are letters, digits, - and _',
      'groups.the leads: group names are letters, digits, - and _',
    ]);
  });

  it('refuses a duration written in words, in defaults and in escalation', () => {
    const problems = problemsOf(
      config({
        defaults: { expiresIn: '15 minutes', uncertainAfter: '1.5h' },
        escalation: {
          ops: { levels: [{ after: '15 minutes', notify: 'leads' }], repeat: { times: 2, every: 'hourly' } },
        },
      }),
    );
    const hint = "(write it like '15m', '24h' or '1h30m')";
    expect(problems).toEqual([
      `defaults.expiresIn: "15 minutes" is not a duration ${hint}`,
      `defaults.uncertainAfter: "1.5h" is not a duration ${hint}`,
      `escalation.ops.levels[0].after: "15 minutes" is not a duration ${hint}`,
      `escalation.ops.repeat.every: "hourly" is not a duration ${hint}`,
    ]);
  });

  it('refuses a duration of zero', () => {
    expect(problemsOf(config({ defaults: { expiresIn: '0m' } }))).toEqual([
      'defaults.expiresIn: must be longer than zero',
    ]);
  });

  it('refuses a default expiry longer than the longest allowed', () => {
    expect(problemsOf(config({ defaults: { expiresIn: '8d', maxExpiresIn: '7d' } }))).toEqual([
      'defaults: expiresIn is longer than maxExpiresIn',
    ]);
  });

  it('refuses escalation levels out of order, or at the same time', () => {
    const problems = problemsOf(
      config({
        escalation: {
          ops: {
            levels: [
              { after: '1h', notify: 'leads' },
              { after: '15m', notify: 'leads' },
              { after: '15m', notify: 'finance' },
            ],
          },
        },
      }),
    );
    expect(problems).toEqual([
      'escalation.ops.levels[1]: must come after the level before it',
      'escalation.ops.levels[2]: must come after the level before it',
    ]);
  });

  it('refuses a reminder at or after the first escalation level', () => {
    for (const after of ['15m', '20m']) {
      const escalation = { ops: { levels: [{ after: '15m', notify: 'leads' }], reminder: { after } } };
      expect(problemsOf(config({ escalation }))).toEqual([
        'escalation.ops.reminder: must come before the first escalation level',
      ]);
    }
  });

  it('does not pile a reminder complaint onto a first level whose duration is already wrong', () => {
    const escalation = { ops: { levels: [{ after: 'soon', notify: 'leads' }], reminder: { after: '5m' } } };
    expect(problemsOf(config({ escalation }))).toEqual([
      `escalation.ops.levels[0].after: "soon" is not a duration (write it like '15m', '24h' or '1h30m')`,
    ]);
  });

  it('refuses escalation for an agent that does not exist', () => {
    const escalation = { warehouse: { levels: [{ after: '15m', notify: 'leads' }] } };
    expect(problemsOf(config({ escalation }))).toEqual(['escalation.warehouse: unknown agent "warehouse"']);
  });

  it('refuses escalation to an unknown group, or to a group with nobody in it', () => {
    const escalation = {
      ops: {
        levels: [
          { after: '15m', notify: 'team-leads' },
          { after: '1h', notify: 'on_call' },
        ],
      },
    };
    const groups = { operators: ['U0OP1'], finance: ['U0FIN1', 'U0FIN2'], leads: ['U0LEAD1'], on_call: [] };
    expect(problemsOf(config({ escalation, groups }))).toEqual([
      'escalation.ops.levels[0].notify: unknown group "team-leads"',
      'escalation.ops.levels[1].notify: group on_call has no members to notify',
    ]);
  });

  it('resolves what an escalation level grants, defaulting to counting as a member and no irreversible steps', () => {
    const loaded = defineConfig(
      config({
        escalation: {
          ops: {
            levels: [
              { after: '15m', notify: 'leads', may: { approve: ['operators'] } },
              {
                after: '1h',
                notify: ['U0LEAD1'],
                may: { approve: '*', counts: 'alone', irreversible: true },
              },
              { after: '2h', notify: 'leads' },
            ],
          },
        },
      }),
    );
    expect(loaded.escalation.ops?.levels.map((level) => level.may)).toEqual([
      { approve: ['operators'], counts: 'member', irreversible: false },
      { approve: '*', counts: 'alone', irreversible: true },
      undefined,
    ]);
  });

  it('refuses an escalation grant naming an unknown group or an unknown way of counting', () => {
    const problems = problemsOf(
      config({
        escalation: {
          ops: {
            levels: [
              { after: '15m', notify: 'leads', may: { approve: ['auditors'] } },
              {
                after: '1h',
                notify: 'leads',
                may: { approve: '*', counts: 'double' as unknown as 'alone' },
              },
            ],
          },
        },
      }),
    );
    expect(problems).toContainEqual(expect.stringMatching(/levels\[1\]\.may\.counts/));
  });

  it('refuses an escalation grant for a group that does not exist', () => {
    expect(
      problemsOf(
        config({
          escalation: {
            ops: { levels: [{ after: '15m', notify: 'leads', may: { approve: ['auditors'] } }] },
          },
        }),
      ),
    ).toEqual(['escalation.ops.levels[0].may.approve: unknown group "auditors"']);
  });

  it('refuses escalatedMayApprove on a rule that does not review', () => {
    const policy = [{ tool: 'add_note', route: 'auto' as const, escalatedMayApprove: false }];
    expect(problemsOf(config({ policy }))).toEqual([
      "policy[0] (add_note#1): escalatedMayApprove only applies to route 'review'",
    ]);
  });

  it('resolves request rates per agent and by default, and refuses a webhook that is not an http(s) URL', () => {
    const agents = {
      ops: {
        ...config().agents.ops!,
        rateLimit: { requests: 30, per: '1m' },
        webhook: { url: 'https://ops.example/hook' },
      },
    };
    const loaded = defineConfig(config({ agents, defaults: { rateLimit: { requests: 5, per: '1s' } } }));
    expect(loaded.defaults.agentRateLimits).toEqual({ ops: { requests: 30, perMs: MINUTE } });
    expect(loaded.defaults.rateLimit).toEqual({ requests: 5, perMs: 1000 });
    const bad = { ops: { ...config().agents.ops!, webhook: { url: 'ftp://ops.example/hook' } } };
    expect(problemsOf(config({ agents: bad }))).toEqual([
      'agents.ops.webhook.url: must be an http:// or https:// URL',
    ]);
  });

  it("resolves an agent's own default expiry, and refuses one longer than the longest allowed", () => {
    const agents = { ops: { ...config().agents.ops!, expiresIn: '2h' } };
    expect(defineConfig(config({ agents })).pipeline.agentExpiresInMs).toEqual({ ops: 2 * HOUR });
    expect(problemsOf(config({ agents: { ops: { ...config().agents.ops!, expiresIn: '30d' } } }))).toEqual([
      'agents.ops.expiresIn: is longer than maxExpiresIn',
    ]);
  });

  it('refuses an escalation with no levels', () => {
    expect(problemsOf(config({ escalation: { ops: { levels: [] } } }))).toEqual([
      'escalation.ops.levels: Too small: expected array to have >=1 items',
    ]);
  });

  it('refuses keys it does not know, such as a misspelt section', () => {
    expect(problemsOf(untyped({ ...config(), escalations: {} }))).toEqual([
      'config: Unrecognized key: "escalations"',
    ]);
    const policy = [{ tool: 'add_note', route: 'auto', distinctFromAuther: true }];
    expect(problemsOf(untyped({ ...config(), policy }))).toEqual([
      'policy[0]: Unrecognized key: "distinctFromAuther"',
    ]);
  });

  it('reports every problem at once, value problems and cross-references together', () => {
    const problems = problemsOf(
      config({
        tools: [issueRefund, addNote, holdShipment, addNote],
        agents: { ops: { tools: ['add_note', 'nope'], channel: 'ops', secret: 'short' } },
        policy: [
          { tool: 'issue_refund', route: 'review' },
          { tool: 'add_note', route: 'review', approvers: 'nobody' },
        ],
        authoring: { ghosts: ['add_note'], operators: ['nope'] },
        escalation: {
          ops: {
            levels: [
              { after: '1h', notify: 'leads' },
              { after: '15 minutes', notify: 'leads' },
            ],
          },
          ghost: { levels: [{ after: '15m', notify: 'leads' }] },
        },
        defaults: { expiresIn: '1 day' },
      }),
    );
    expect(problems).toEqual([
      'agents.ops.channel: must be a Slack id such as U024BE7LH or C0OPS',
      'agents.ops.secret: must be at least 16 characters',
      'tools: add_note is defined twice',
      'agents.ops.tools: unknown tool "nope"',
      'policy[0] (issue_refund#1): a review rule needs approvers (a group name)',
      'policy[1] (add_note#2): unknown group "nobody"',
      'authoring: unknown group "ghosts"',
      'authoring.operators: unknown tool "nope"',
      `defaults.expiresIn: "1 day" is not a duration (write it like '15m', '24h' or '1h30m')`,
      `escalation.ops.levels[1].after: "15 minutes" is not a duration (write it like '15m', '24h' or '1h30m')`,
      'escalation.ghost: unknown agent "ghost"',
    ]);
  });

  it('stops at structural problems, where cross-checks could only guess', () => {
    const agents = { ops: { tools: 'add_note', channel: 'C0OPS', secret: 'x'.repeat(16) } };
    expect(problemsOf(untyped({ ...config(), agents }))).toEqual([
      'agents.ops.tools: Invalid input: expected array, received string',
    ]);
  });
});

describe('ConfigError', () => {
  it('carries the code invalid_config, the problems, and a message listing each one', () => {
    let caught: unknown;
    try {
      defineConfig(config({ authoring: { ghosts: ['add_note'] }, defaults: { expiresIn: 'soon' } }));
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    expect(caught).toBeInstanceOf(Error);
    expect(caught).toMatchObject({
      name: 'ConfigError',
      code: 'invalid_config',
      problems: [
        'authoring: unknown group "ghosts"',
        `defaults.expiresIn: "soon" is not a duration (write it like '15m', '24h' or '1h30m')`,
      ],
    });
    expect((caught as Error).message).toBe(
      [
        'invalid Countersign config:',
        '  - authoring: unknown group "ghosts"',
        `  - defaults.expiresIn: "soon" is not a duration (write it like '15m', '24h' or '1h30m')`,
      ].join('\n'),
    );
  });

  it('is recognised by isConfigError, and nothing else is', () => {
    expect(isConfigError(new ConfigError(['x: y']))).toBe(true);
    expect(isConfigError(new Error('invalid Countersign config'))).toBe(false);
    expect(isConfigError({ code: 'invalid_config', problems: [] })).toBe(false);
    expect(isConfigError(undefined)).toBe(false);
  });
});

describe('resolveSecret', () => {
  it('returns an inline secret as written', () => {
    expect(resolveSecret('an-inline-test-secret', {})).toBe('an-inline-test-secret');
  });

  it('reads an environment secret from the environment it is given', () => {
    expect(resolveSecret({ env: 'FREIGHT_AGENT_SECRET' }, { FREIGHT_AGENT_SECRET: 's3cret-from-env' })).toBe(
      's3cret-from-env',
    );
  });

  it('returns undefined when the variable is unset or empty, never an empty key', () => {
    expect(resolveSecret({ env: 'FREIGHT_AGENT_SECRET' }, {})).toBeUndefined();
    expect(
      resolveSecret({ env: 'FREIGHT_AGENT_SECRET' }, { FREIGHT_AGENT_SECRET: undefined }),
    ).toBeUndefined();
    expect(resolveSecret({ env: 'FREIGHT_AGENT_SECRET' }, { FREIGHT_AGENT_SECRET: '' })).toBeUndefined();
  });
});

describe('config digest', () => {
  const digestOf = (input: ConfigInput) => defineConfig(input).digest;

  it('is the same for the same config, built twice', () => {
    expect(digestOf(config())).toBe(digestOf(config()));
  });

  it('changes when a policy predicate changes, even by its threshold', () => {
    const withThreshold = (when: PolicyRule['when']) =>
      config({
        policy: [
          {
            tool: 'issue_refund',
            ...(when === undefined ? {} : { when }),
            route: 'review',
            approvers: 'finance',
          },
          { tool: 'add_note', route: 'auto' },
        ],
      });
    const base = digestOf(withThreshold((args) => Number(args.amount) > 50_000));
    expect(digestOf(withThreshold((args) => Number(args.amount) > 50_000))).toBe(base);
    expect(digestOf(withThreshold((args) => Number(args.amount) > 500_000))).not.toBe(base);
    expect(digestOf(withThreshold((args) => Number(args.amount) >= 50_000))).not.toBe(base);
    expect(digestOf(withThreshold(undefined))).not.toBe(base);
  });

  // Known bug, outside this module: rule() wraps `when` in an adapter, so the digest hashes the
  // adapter's source, which is the same for every rule() predicate (src/pipeline/policy.ts).
  it('changes when the threshold of a rule() predicate changes', () => {
    const withThreshold = (limit: 'low' | 'high') =>
      config({
        policy: [
          limit === 'low'
            ? rule(issueRefund, {
                when: (args) => args.amount > 50_000,
                route: 'review',
                approvers: 'finance',
              })
            : rule(issueRefund, {
                when: (args) => args.amount > 500_000,
                route: 'review',
                approvers: 'finance',
              }),
          rule(addNote, { route: 'auto' }),
        ],
      });
    expect(digestOf(withThreshold('low'))).not.toBe(digestOf(withThreshold('high')));
  });

  it('changes when the approvals a rule needs change', () => {
    const policy = (approvals: number) => [
      { tool: 'issue_refund', route: 'review' as const, approvers: 'finance', approvals },
    ];
    expect(digestOf(config({ policy: policy(1) }))).not.toBe(digestOf(config({ policy: policy(2) })));
  });

  it('changes when a money limit in a tool schema changes', () => {
    const refund = (max: number) =>
      defineTool({ ...issueRefund, args: z.strictObject({ invoice_id: text(), amount: money({ max }) }) });
    const tools = (max: number) => [refund(max), addNote, holdShipment];
    expect(digestOf(config({ tools: tools(50_000) }))).not.toBe(digestOf(config({ tools: tools(500_000) })));
  });

  it("changes when a money field's currency changes", () => {
    const refund = (currency: string) =>
      defineTool({
        ...issueRefund,
        args: z.strictObject({ invoice_id: text(), amount: money({ currency }) }),
      });
    expect(digestOf(config({ tools: [refund('USD'), addNote, holdShipment] }))).not.toBe(
      digestOf(config({ tools: [refund('JPY'), addNote, holdShipment] })),
    );
  });

  it('changes when a tool check or who may approve changes', () => {
    const checked = defineTool({ ...addNote, checks: () => [] });
    expect(digestOf(config({ tools: [issueRefund, checked, holdShipment] }))).not.toBe(digestOf(config()));
    const groups = { operators: ['U0OP1', 'U0OP2'], finance: ['U0FIN1', 'U0FIN3'], leads: ['U0LEAD1'] };
    expect(digestOf(config({ groups }))).not.toBe(digestOf(config()));
    expect(digestOf(config({ authoring: { operators: '*', finance: '*' } }))).not.toBe(digestOf(config()));
  });

  it('changes when an escalation level grants approvals, or a rule keeps its steps from escalated people', () => {
    const base = digestOf(config());
    const granting = (may: { approve: '*' | string[]; counts?: 'member' | 'alone' }) =>
      digestOf(config({ escalation: { ops: { levels: [{ after: '15m', notify: 'leads', may }] } } }));
    expect(granting({ approve: ['operators'] })).not.toBe(base);
    expect(granting({ approve: ['operators'], counts: 'alone' })).not.toBe(
      granting({ approve: ['operators'] }),
    );
    const policy = [...config().policy.slice(0, 3), { ...config().policy[3]!, escalatedMayApprove: false }];
    expect(digestOf(config({ policy }))).not.toBe(base);
  });

  it('does not change with delivery settings that decide no route: channel, secret, escalation, expiry', () => {
    const base = digestOf(config());
    const agents = {
      ops: {
        tools: ['issue_refund', 'add_note', 'hold_shipment'],
        channel: 'C0OTHER',
        secret: { env: 'OPS' },
      },
    };
    expect(digestOf(config({ agents }))).toBe(base);
    expect(digestOf(config({ escalation: { ops: { levels: [{ after: '15m', notify: 'leads' }] } } }))).toBe(
      base,
    );
    expect(digestOf(config({ defaults: { expiresIn: '2h' } }))).toBe(base);
  });
});
