import { describe, expect, it } from 'vitest';
import { createKeys } from '../../src/approvals/index.ts';
import {
  bullPrefix,
  escalateJobId,
  expireJobId,
  QUEUES,
  RENDER_QUEUE,
  remindJobId,
  renderAtJobId,
  renderJobId,
  repairJobId,
  TIMERS_QUEUE,
  WEBHOOKS_QUEUE,
  webhookJobId,
} from '../../src/queue/index.ts';

const RUN = '019d47a8-6e00-7a3c-9f1e-4b2d8c0e1a77';

describe('queue names and job ids', () => {
  it('names the queues of docs/architecture.md §8', () => {
    expect([TIMERS_QUEUE, WEBHOOKS_QUEUE, RENDER_QUEUE]).toEqual(['timers', 'webhooks', 'render']);
    expect(QUEUES).toEqual([TIMERS_QUEUE, WEBHOOKS_QUEUE, RENDER_QUEUE]);
  });

  it('keeps BullMQ keys under our prefix, in one cluster slot', () => {
    expect(bullPrefix('cs')).toBe('cs:{bull}');
  });

  it('derives webhook and timer ids from the run, version and level', () => {
    expect(webhookJobId(RUN)).toBe(`webhook-${RUN}`);
    expect(expireJobId(RUN, 3)).toBe(`expire-${RUN}-v3`);
    expect(escalateJobId(RUN, 3, 2)).toBe(`escalate-${RUN}-v3-l2`);
    expect(escalateJobId(RUN, 3, 2, 1)).toBe(`escalate-${RUN}-v3-l2-r1`);
    expect(remindJobId(RUN, 3)).toBe(`remind-${RUN}-v3`);
    expect(renderJobId(RUN, 12)).toBe(`render-${RUN}-r12`);
    expect(repairJobId(RUN)).toBe(`render-${RUN}-repair`);
    expect(renderAtJobId(RUN, 1775037600000)).toBe(`render-${RUN}-at1775037600000`);
  });

  it('never puts a colon in a job id (BullMQ refuses them)', () => {
    for (const id of [
      webhookJobId(RUN),
      expireJobId(RUN, 1),
      escalateJobId(RUN, 1, 1),
      remindJobId(RUN, 1),
      renderJobId(RUN, 1),
      repairJobId(RUN),
      renderAtJobId(RUN, 1),
    ]) {
      expect(id).not.toContain(':');
    }
  });

  it('publishes decisions and feed entries per agent under the key prefix', () => {
    const keys = createKeys('cs');
    expect(keys.decided('freight-ops')).toBe('cs:decided:freight-ops');
    expect(keys.feed('freight-ops')).toBe('cs:feed:freight-ops');
    expect(keys.feedChannel('freight-ops')).toBe('cs:feed-updated:freight-ops');
  });
});
