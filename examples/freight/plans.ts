/**
 * The freight plans from the product brief: what the agent generates for ticket #74991, and the edit a
 * person makes to it. Used by the demo, the tests and the benchmarks.
 */
export const FREIGHT_AGENT = 'freight-ops';

/** The steps the agent proposes (3 steps: a note, a reschedule, a reply). */
export const freightSteps = [
  {
    id: 's1',
    tool: 'add_note',
    args: {
      ticket_id: '74991',
      note: 'Customer reports the pallet delivery on 2 April was missed; driver logged no attempt.',
    },
  },
  { id: 's2', tool: 'reschedule_delivery', args: { delivery_id: 'dl_55120', window: '2026-04-03' } },
  {
    id: 's3',
    tool: 'send_reply',
    args: {
      ticket_id: '74991',
      body: 'Hi Marta, sorry about the missed delivery. We have rebooked it for Friday 3 April, before noon.',
    },
  },
] as const;

export const freightContext = { ticket_id: '74991', customer: 'Marta Lind', account: 'Nordvik Logistics' };
export const freightSummary = 'Ticket #74991: missed pallet delivery. Rebook it and tell the customer.';

/** The refund a person adds in the edit (the invoice belongs to another account). */
export const addedRefundStep = {
  id: 's4',
  tool: 'issue_refund',
  args: { invoice_id: 'in_74119', amount: 148_900 },
} as const;

/** A full envelope for `validate`, as intake would build it. */
export function freightPlan(options: { runId?: string; now: number; expiresInMs?: number }) {
  return {
    runId: options.runId ?? 'run-freight-1',
    agent: FREIGHT_AGENT,
    summary: freightSummary,
    context: freightContext,
    expiresAt: new Date(options.now + (options.expiresInMs ?? 2 * 3_600_000)).toISOString(),
    steps: freightSteps.map((step) => ({ ...step, args: { ...step.args } })),
  };
}

/** The 5-step variant used by the pipeline benchmark (adds a small refund and a second note). */
export function freightPlan5(options: { runId?: string; now: number }) {
  const plan = freightPlan(options);
  return {
    ...plan,
    steps: [
      ...plan.steps,
      { id: 's4', tool: 'issue_refund', args: { invoice_id: 'in_74121', amount: 4_500 } },
      { id: 's5', tool: 'add_note', args: { ticket_id: '74991', note: 'Refunded the missed-delivery fee.' } },
    ],
  };
}
