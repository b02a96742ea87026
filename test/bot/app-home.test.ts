/**
 * HomePublisher's pacing, with a recording Slack gateway and inboxes handed in (no Redis: what a home
 * shows is tested in test/approvals/inbox.test.ts and end to end in inbox.test.ts).
 */
import type { HomeView } from '@slack/types';
import { describe, expect, it } from 'vitest';
import type { Inbox } from '../../src/approvals/index.ts';
import { type CardLinkCache, HomePublisher } from '../../src/bot/app-home.ts';
import type { SlackGateway } from '../../src/bot/slack-gateway.ts';

const EMPTY: Inbox = { waiting: [], escalated: [], decided: [] };

function publisher(inboxOf: (user: string) => Inbox = () => EMPTY) {
  const time = { now: Date.parse('2026-04-01T10:00:00Z') };
  const published: { user: string; view: HomeView }[] = [];
  const reads: string[][] = [];
  const homes = new HomePublisher({
    approvals: {
      inboxesFor: async (users) => {
        reads.push([...users]);
        return new Map(users.map((user) => [user, inboxOf(user)]));
      },
    },
    config: { groups: { operators: ['U0OP1', 'U0OP2'] } },
    links: { linksOf: async () => ({}) } as unknown as CardLinkCache,
    gateway: {
      publishHome: async (user: string, view: HomeView) => {
        published.push({ user, view });
      },
    } as unknown as SlackGateway,
    clock: () => time.now,
    onError: (error) => {
      throw error;
    },
    debounceMs: 20,
  });
  return { homes, published, reads, time };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 80));

describe('HomePublisher', () => {
  it('publishes each home once for a burst of refreshes, reading the runs once for all of them', async () => {
    const { homes, published, reads } = publisher();
    for (let i = 0; i < 10; i++) homes.refresh(['U0OP1', 'U0OP2']);
    await settle();
    expect(published.map((entry) => entry.user).sort()).toEqual(['U0OP1', 'U0OP2']);
    expect(reads).toEqual([['U0OP1', 'U0OP2']]);
    await homes.close();
  });

  it('does not publish a home whose inbox did not change, unless the tab was opened', async () => {
    const { homes, published } = publisher();
    homes.refresh(['U0OP1']);
    await settle();
    homes.refresh(['U0OP1']);
    await settle();
    expect(published).toHaveLength(1);
    await homes.publish('U0OP1', { force: true });
    expect(published).toHaveLength(2);
    await homes.close();
  });

  it('a run change refreshes the homes of the people it concerns who opened their tab in the last 15 minutes', async () => {
    const { homes, reads, time } = publisher();
    const run = {
      current: { plan: { steps: [{ route: { kind: 'review', group: 'operators' } }] } },
      approvals: [],
      escalatedTo: ['U0LEAD1'],
    } as unknown as Parameters<HomePublisher['runChanged']>[0];
    homes.runChanged(run);
    await settle();
    expect(reads).toEqual([]); // nobody has the tab open: no inbox read

    for (const user of ['U0LEAD1', 'U0OP1', 'U0OP2', 'U0OTHER']) await homes.publish(user, { force: true });
    reads.length = 0;
    homes.runChanged(run);
    await settle();
    expect(reads.map((users) => [...users].sort())).toEqual([['U0LEAD1', 'U0OP1', 'U0OP2']]);

    time.now += 10 * 60_000;
    await homes.publish('U0OP2', { force: true }); // opened again: watched for 15 minutes more
    reads.length = 0;
    time.now += 6 * 60_000;
    homes.runChanged(run);
    await settle();
    expect(reads).toEqual([['U0OP2']]);
    await homes.close();
  });

  it('publishes nothing once closed', async () => {
    const { homes, published } = publisher();
    homes.refresh(['U0OP1']);
    await homes.close();
    await settle();
    expect(published).toEqual([]);
  });
});
