/** Reading what a person typed after `/countersign` (pure). */
import { describe, expect, it } from 'vitest';
import { parseCountersignCommand } from '../../src/bot/listeners/inbox.ts';

describe('parseCountersignCommand', () => {
  it('reads pending, show <run id> and help, in any case and spacing', () => {
    expect(parseCountersignCommand('pending')).toEqual({ kind: 'pending' });
    expect(parseCountersignCommand('  PENDING ')).toEqual({ kind: 'pending' });
    expect(parseCountersignCommand('show  run-42')).toEqual({ kind: 'show', runId: 'run-42' });
    expect(parseCountersignCommand('help')).toEqual({ kind: 'help' });
    expect(parseCountersignCommand('')).toEqual({ kind: 'help' });
  });

  it('answers anything else with the help, naming what was typed', () => {
    expect(parseCountersignCommand('approve all')).toEqual({ kind: 'help', unknown: 'approve all' });
    expect(parseCountersignCommand('show')).toEqual({ kind: 'help', unknown: 'show' });
    expect(parseCountersignCommand('show a b')).toEqual({ kind: 'help', unknown: 'show a b' });
    expect(parseCountersignCommand('pending now')).toEqual({ kind: 'help', unknown: 'pending now' });
  });
});
