import { type ConfigInput, defineConfig } from '../../src/config/index.ts';
import { rule } from '../../src/pipeline/index.ts';
import { addNote, freightTools, issueRefund, rescheduleDelivery, sendReply } from './tools.ts';

/**
 * The freight-operations example: an agent that handles delivery tickets. Notes go through on their
 * own, replies and reschedules need an operator, refunds need finance (two finance approvers over
 * $500, never the person who wrote the step). Operators may write everything but refunds. A plan left
 * unanswered for 15 minutes goes to the leads, who may then approve the operators' steps; after an
 * hour they count as one finance approver too — but a refund over $500 stays with finance.
 * `freightConfigInput` is the same configuration as written, for variants (tests with short timers).
 */
export const freightConfigInput: ConfigInput = {
  tools: freightTools,
  agents: {
    'freight-ops': {
      tools: freightTools.map((tool) => tool.name),
      channel: 'C0OPS',
      secret: { env: 'FREIGHT_AGENT_SECRET' },
    },
  },
  groups: {
    operators: ['U0OP1', 'U0OP2'],
    finance: ['U0FIN1', 'U0FIN2', 'U0FIN3'],
    leads: ['U0LEAD1'],
  },
  policy: [
    rule(addNote, { name: 'notes-auto', route: 'auto' }),
    rule(issueRefund, {
      name: 'large-refunds',
      when: (args) => args.amount > 50_000,
      route: 'review',
      approvers: 'finance',
      approvals: 2,
      distinctFromAuthor: true,
      escalatedMayApprove: false,
    }),
    rule(issueRefund, { name: 'refunds', route: 'review', approvers: 'finance', distinctFromAuthor: true }),
    {
      name: 'customer-facing',
      tool: [sendReply.name, rescheduleDelivery.name],
      route: 'review',
      approvers: 'operators',
    },
  ],
  authoring: {
    operators: [rescheduleDelivery.name, sendReply.name, addNote.name],
    finance: '*',
    leads: '*',
  },
  escalation: {
    'freight-ops': {
      levels: [
        // Replies to customers are irreversible: the grant says so explicitly.
        { after: '15m', notify: 'leads', may: { approve: ['operators'], irreversible: true } },
        {
          after: '1h',
          notify: 'leads',
          channel: 'C0ESCALATE',
          may: { approve: ['operators', 'finance'], counts: 'member', irreversible: true },
        },
      ],
      repeat: { times: 2, every: '1h' },
    },
  },
  defaults: { expiresIn: '24h', maxExpiresIn: '7d' },
};

export default defineConfig(freightConfigInput);
