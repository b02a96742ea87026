/**
 * The freight example with escalation in seconds, for timer tests (no sleeping on real minutes): a
 * reminder in the card's channel after 0.5 s; after 1 s the leads (U0LEAD1) by DM; after 2 s U0FIN2 by
 * DM and the #escalations channel; that last level once more 1 s later. Expiry comes from each
 * submission (`expiresIn: '4s'`).
 */
import { freightConfigInput } from '../../examples/freight/countersign.config.ts';
import { type CountersignConfig, defineConfig } from '../../src/config/index.ts';
import type { ChannelSeed } from '../../src/emulator/index.ts';

export const ESCALATION_CHANNEL = 'C0ESC';
export const ESCALATION_CHANNELS: readonly ChannelSeed[] = [{ id: ESCALATION_CHANNEL, name: 'escalations' }];
/** Level 1 notifies the leads group; level 2 a finance member who is no operator. */
export const LEVEL_1 = 'U0LEAD1';
export const LEVEL_2 = 'U0FIN2';

export const timersConfig: CountersignConfig = defineConfig({
  ...freightConfigInput,
  escalation: {
    'freight-ops': {
      levels: [
        { after: '1s', notify: 'leads', may: { approve: ['operators'], irreversible: true } },
        {
          after: '2s',
          notify: [LEVEL_2],
          channel: ESCALATION_CHANNEL,
          may: { approve: ['operators'], irreversible: true },
        },
      ],
      repeat: { times: 1, every: '1s' },
      reminder: { after: '500ms' },
    },
  },
});
