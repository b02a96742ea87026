/**
 * The inbox in Slack, end to end over HTTP with real signatures, real Redis and the Slack stand-in: the
 * App Home tab published on `app_home_opened` and following the run, and `/countersign` answered
 * privately through its response_url.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freightContext, freightSteps, freightSummary } from '../../examples/freight/plans.ts';
import {
  buildAppHomeOpenedEvent,
  buildSlashCommand,
  postEvent,
  postSlashCommand,
  type SlackView,
} from '../../src/emulator/index.ts';
import { type BotStack, botStack, SIGNING_SECRET } from '../support/bot-stack.ts';

let stack: BotStack;
beforeAll(async () => {
  stack = await botStack('inbox');
});
afterAll(() => stack.stop());

const submitFreight = () =>
  stack.client.submit({
    summary: freightSummary,
    context: freightContext,
    steps: freightSteps.map((step) => ({ ...step, args: { ...step.args } })),
    expiresIn: '2h',
  });

/** The Home tab's lists by their header ("Waiting for you"), each the text of its entries. */
function homeLists(view: SlackView | undefined): Record<string, string> {
  const lists: Record<string, string> = {};
  let current = '';
  for (const block of (view?.blocks ?? []) as { type: string; text?: { text: string } }[]) {
    if (block.type === 'header') {
      current = (block.text?.text ?? '').replace(/ \(\d+\)$/, '');
      lists[current] = '';
    } else if (block.type === 'section' && current !== '') {
      lists[current] += `${block.text?.text ?? ''}\n`;
    }
  }
  return lists;
}

const permalinkOf = (card: { channel: string; ts: string }) =>
  `https://acme.slack.com/archives/${card.channel}/p${card.ts.replace('.', '')}`;

async function openHome(user: string) {
  return postEvent(stack.eventsUrl, SIGNING_SECRET, buildAppHomeOpenedEvent({ user }));
}

async function command(user: string, text: string, channel = 'C0OPS') {
  const before = stack.slack.state.ephemerals(channel).filter((e) => e.user === user).length;
  const fields = buildSlashCommand({
    command: '/countersign',
    text,
    user,
    channel,
    responseUrl: stack.slack.responseUrl(channel, user),
  });
  const answer = await postSlashCommand(stack.eventsUrl, SIGNING_SECRET, fields);
  expect(answer.status).toBe(200);
  const ephemeral = await stack.until(
    () => stack.slack.state.ephemerals(channel).filter((e) => e.user === user)[before],
  );
  return { ack: answer, ephemeral, text: `${ephemeral.text}\n${JSON.stringify(ephemeral.blocks)}` };
}

describe('App Home', () => {
  it('opening the tab publishes what waits for the person, linked to the card; after the approval it moves to "Recently decided"', async () => {
    const { runId } = await submitFreight();
    const card = await stack.card(runId);
    expect((await openHome('U0OP1')).status).toBe(200);
    const waiting = await stack.until(() => {
      const lists = homeLists(stack.slack.state.homeView('U0OP1'));
      return lists['Waiting for you']?.includes(runId) ? lists : undefined;
    });
    expect(waiting['Waiting for you']).toContain(`<${permalinkOf(card)}|`);
    expect(waiting['Waiting for you']).toMatch(/Your approval is needed for/);
    expect(waiting['Recently decided']).not.toContain(runId);

    // Someone outside every group the plan needs: nothing waits for them.
    await openHome('U0LEAD1');
    const lead = await stack.until(() => stack.slack.state.homeView('U0LEAD1'));
    expect(homeLists(lead)['Waiting for you']).not.toContain(runId);

    expect((await stack.click('U0OP1', card, 'approve')).status).toBe(200);
    // No new app_home_opened: the rendering of the approved run re-publishes the approver's home.
    const decided = await stack.until(() => {
      const lists = homeLists(stack.slack.state.homeView('U0OP1'));
      return lists['Recently decided']?.includes(runId) ? lists : undefined;
    }, 15_000);
    expect(decided['Waiting for you']).not.toContain(runId);
    expect(decided['Recently decided']).toMatch(/Approved by <@U0OP1>/);
    expect(decided['Recently decided']).toContain(`<${permalinkOf(card)}|`);
  });

  it('refuses an app_home_opened with a forged signature', async () => {
    const answer = await postEvent(
      stack.eventsUrl,
      'not-the-signing-secret',
      buildAppHomeOpenedEvent({ user: 'U0FIN1' }),
    );
    expect(answer.status).toBe(401);
    expect(stack.slack.state.homeView('U0FIN1')).toBeUndefined();
  });
});

describe('/countersign', () => {
  it('`pending` lists, only to the person, the runs waiting for them, with the card link', async () => {
    const { runId } = await submitFreight();
    const card = await stack.card(runId);
    await stack.rendered(runId);
    const answer = await command('U0OP1', 'pending');
    expect(answer.ephemeral.user).toBe('U0OP1');
    expect(answer.text).toContain(runId);
    expect(answer.text).toContain(permalinkOf(card));
    expect(answer.text).toMatch(/Waiting for you/);
  });

  it('`show <run id>` says where the run stands; an unknown id is said in plain words', async () => {
    const { runId } = await submitFreight();
    await stack.card(runId);
    const shown = await command('U0FIN1', `show ${runId}`);
    expect(shown.text).toContain(runId);
    expect(shown.text).toMatch(/expires/);
    const unknown = await command('U0FIN1', 'show run_does_not_exist');
    expect(unknown.text).toMatch(/There is no plan with the run id/);
  });

  it('`help`, an empty command and an unknown subcommand answer the help', async () => {
    expect((await command('U0OP2', 'help')).text).toMatch(/show &lt;run id&gt;|show <run id>/);
    expect((await command('U0OP2', '')).text).toMatch(/countersign pending/);
    const unknown = await command('U0OP2', 'approve everything');
    expect(unknown.text).toMatch(/I don't know “approve everything”/);
    expect(unknown.text).toMatch(/countersign pending/);
  });

  it('refuses a slash command with a forged signature, and answers nobody', async () => {
    const before = stack.slack.state.ephemerals().length;
    const fields = buildSlashCommand({
      command: '/countersign',
      text: 'pending',
      user: 'U0OP1',
      channel: 'C0OPS',
      responseUrl: stack.slack.responseUrl('C0OPS', 'U0OP1'),
    });
    const answer = await postSlashCommand(stack.eventsUrl, 'not-the-signing-secret', fields);
    expect(answer.status).toBe(401);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(stack.slack.state.ephemerals().length).toBe(before);
  });
});

describe('over Socket Mode', () => {
  let socket: BotStack;
  beforeAll(async () => {
    socket = await botStack('inbox-socket', { socketMode: true });
  });
  afterAll(() => socket.stop());

  it('publishes the Home tab on an events_api app_home_opened, and answers /countersign through its response_url', async () => {
    const { runId } = await socket.client.submit({
      summary: freightSummary,
      context: freightContext,
      steps: freightSteps.map((step) => ({ ...step, args: { ...step.args } })),
      expiresIn: '2h',
    });
    await socket.card(runId);
    await socket.slack.socketMode.deliver(buildAppHomeOpenedEvent({ user: 'U0OP1' }), { type: 'events_api' });
    await socket.until(() =>
      homeLists(socket.slack.state.homeView('U0OP1'))['Waiting for you']?.includes(runId),
    );
    const fields = buildSlashCommand({
      command: '/countersign',
      text: `show ${runId}`,
      user: 'U0OP1',
      channel: 'C0OPS',
      responseUrl: socket.slack.responseUrl('C0OPS', 'U0OP1'),
    });
    await socket.slack.socketMode.deliver(fields, { type: 'slash_commands' });
    const answer = await socket.until(() =>
      socket.slack.state.ephemerals('C0OPS').find((e) => e.user === 'U0OP1' && e.text.includes(runId)),
    );
    expect(JSON.stringify(answer.blocks)).toMatch(/Your approval is needed for/);
  });
});
