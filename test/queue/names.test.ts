import { describe, expect, it } from 'vitest';
import {
  bullPrefix,
  decidedChannel,
  decisionJobId,
  decisionsQueue,
  escalateJobId,
  expireJobId,
  INTAKE_QUEUE,
  intakeJobId,
  remindJobId,
  TIMERS_QUEUE,
} from '../../src/queue/index.ts';

const RUN = '019d47a8-6e00-7a3c-9f1e-4b2d8c0e1a77';

describe('queue names and job ids', () => {
  it('names the three queues of docs/architecture.md §8', () => {
    expect([INTAKE_QUEUE, TIMERS_QUEUE, decisionsQueue('freight-ops')]).toEqual([
      'intake',
      'timers',
      'decisions-freight-ops',
    ]);
  });

  it('keeps BullMQ keys under our prefix, in one cluster slot', () => {
    expect(bullPrefix('cs')).toBe('cs:{bull}');
  });

  it('gives the same plan text for the same run the same intake job id, and other text another', () => {
    const text = '{"runId":"r"}';
    expect(intakeJobId(RUN, text)).toBe(intakeJobId(RUN, text));
    expect(intakeJobId(RUN, text)).not.toBe(intakeJobId(RUN, '{"runId":"r2"}'));
    expect(intakeJobId(RUN, text)).toMatch(new RegExp(`^submit-${RUN}-[0-9a-f]{32}$`));
  });

  it('derives decision and timer ids from the run, version and level', () => {
    expect(decisionJobId(RUN)).toBe(`decision-${RUN}`);
    expect(expireJobId(RUN, 3)).toBe(`expire-${RUN}-v3`);
    expect(escalateJobId(RUN, 3, 2)).toBe(`escalate-${RUN}-v3-l2`);
    expect(escalateJobId(RUN, 3, 2, 1)).toBe(`escalate-${RUN}-v3-l2-r1`);
    expect(remindJobId(RUN, 3)).toBe(`remind-${RUN}-v3`);
  });

  it('never puts a colon in a job id (BullMQ refuses them)', () => {
    for (const id of [
      intakeJobId(RUN, 'x'),
      decisionJobId(RUN),
      expireJobId(RUN, 1),
      escalateJobId(RUN, 1, 1),
    ]) {
      expect(id).not.toContain(':');
    }
  });

  it('publishes decisions per agent under the key prefix', () => {
    expect(decidedChannel('cs', 'freight-ops')).toBe('cs:decided:freight-ops');
  });
});
