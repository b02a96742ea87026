/**
 * Approver groups taken from Slack user groups, end to end: the config names `{ usergroup: 'S0OPS' }`,
 * Countersign reads it from the Slack stand-in with usergroups.users.list at start and on refresh, and
 * approvals follow the membership Slack gives. Real Bolt over HTTP, real Redis.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { freightConfigInput } from '../../examples/freight/countersign.config.ts';
import { freightContext, freightSteps, freightSummary } from '../../examples/freight/plans.ts';
import { type CountersignConfig, defineConfig } from '../../src/config/index.ts';
import type { EmulatedUsergroup } from '../../src/emulator/index.ts';
import { type BotStack, type BotStackOptions, botStack } from '../support/bot-stack.ts';

const OPS: EmulatedUsergroup = { id: 'S0OPS', handle: 'ops', users: ['U0OP2'] };

let stack: BotStack | undefined;
/** The running stack's config: its operators list is the one Countersign fills from Slack. */
let config: CountersignConfig;
afterEach(async () => {
  await stack?.stop();
  stack = undefined;
});

/** Countersign with operators read from the Slack user group S0OPS (the other groups stay id lists). */
async function start(options: BotStackOptions = {}): Promise<BotStack> {
  config = defineConfig({
    ...freightConfigInput,
    groups: { ...freightConfigInput.groups, operators: { usergroup: 'S0OPS' } },
  });
  stack = await botStack('user-groups', {
    config,
    emulator: { usergroups: [OPS] },
    ...options,
  });
  return stack;
}

async function submit(running: BotStack) {
  const { runId } = await running.client.submit({
    summary: freightSummary,
    context: freightContext,
    steps: freightSteps.map((step) => ({ ...step, args: { ...step.args } })),
    expiresIn: '2h',
  });
  return { runId, card: await running.card(runId) };
}

/** Approves as `user` and says whether their approval counted (the run's approvals name them). */
async function approvalCounts(running: BotStack, runId: string, user: string): Promise<boolean> {
  const card = await running.card(runId);
  expect((await running.click(user, card, 'approve')).status).toBe(200);
  await running.rendered(runId);
  return ((await running.countersign.approvals.getRun(runId))?.approvals ?? []).some(
    (approval) => approval.userId === user,
  );
}

describe('approver groups from Slack user groups', () => {
  it('reads the user group at start: its members approve, people outside it are refused', async () => {
    const running = await start();
    expect(
      running.slack.calls.filter((call) => call.method === 'usergroups.users.list')[0]?.args,
    ).toMatchObject({
      usergroup: 'S0OPS',
    });
    const { runId } = await submit(running);
    expect(await approvalCounts(running, runId, 'U0OP1')).toBe(false);
    const refusal = await running.until(() =>
      running.slack.state.ephemerals('C0OPS').find((e) => e.user === 'U0OP1' && /operators/.test(e.text)),
    );
    expect(refusal.text).toMatch(/only members of operators/);
    expect(await approvalCounts(running, runId, 'U0OP2')).toBe(true);
    expect((await running.countersign.approvals.getRun(runId))?.status).toBe('approved');
  });

  it('follows a membership change on refresh, and keeps the last known members while Slack fails', async () => {
    const running = await start({ userGroupRefreshMs: 200 });
    running.slack.setUsergroupMembers('S0OPS', ['U0OP1']);
    await running.until(() => operators().includes('U0OP1'));
    expect(operators()).toEqual(['U0OP1']);

    // Slack answers 500 to every read: the last known members stay.
    running.slack.faults.inject({ method: 'usergroups.users.list', kind: 'error-before', times: Infinity });
    const failedReads = () =>
      running.slack.calls.filter((call) => call.method === 'usergroups.users.list').length;
    const before = failedReads();
    await running.until(() => failedReads() >= before + 2);
    expect(operators()).toEqual(['U0OP1']);
    const { runId } = await submit(running);
    expect(await approvalCounts(running, runId, 'U0OP1')).toBe(true);
  });

  it('starts with the group empty when Slack cannot be reached, and fills it once Slack answers', async () => {
    const running = await start({
      userGroupRefreshMs: 1_000,
      beforeStart: (slack) =>
        slack.faults.inject({ method: 'usergroups.users.list', kind: 'error-before', times: 1 }),
    });
    // Started: nobody counts as an operator until Slack answers (nothing approved on a guess).
    expect(operators()).toEqual([]);
    await running.until(() => operators().includes('U0OP2'));
    const { runId } = await submit(running);
    expect(await approvalCounts(running, runId, 'U0OP2')).toBe(true);
  });

  it('refuses to start, saying which group and why, when Slack does not know the user group', async () => {
    const failed = botStack('user-groups', {
      config: defineConfig({
        ...freightConfigInput,
        groups: { ...freightConfigInput.groups, finance: { usergroup: 'S0NOPE' } },
      }),
      emulator: { usergroups: [OPS] },
    });
    await expect(failed).rejects.toThrow(
      /group finance: Slack refused user group S0NOPE \(no_such_subteam\): no such user group in this workspace/,
    );
  });
});

/** The operators group's members as Countersign holds them now. */
function operators(): readonly string[] {
  return config.groups.operators ?? [];
}
