/**
 * The freight example's `preview` hooks (examples/freight/previews.ts), called directly: the change set
 * each step would show its approvers, read from the example dataset at the entity's version.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { changeDelivery, resetFreightData, versionOf } from '../../examples/freight/data.ts';
import { freightContext, freightPlan } from '../../examples/freight/plans.ts';
import { dayLabel, previewRefund, previewReschedule } from '../../examples/freight/previews.ts';
import { issueRefund, rescheduleDelivery, sendReply } from '../../examples/freight/tools.ts';

afterEach(() => resetFreightData());

const plan = freightPlan({ now: Date.parse('2026-04-02T09:00:00Z') });
const ctx = {
  stepId: 's4',
  plan,
  now: Date.parse('2026-04-02T09:00:00Z'),
  signal: new AbortController().signal,
};

describe('reschedule_delivery preview', () => {
  it('moves the delivery date, labelled, at the version it read, and breaks the booked window as the demo plans it', () => {
    expect(previewReschedule({ delivery_id: 'dl_55120', window: '2026-04-03' })).toEqual({
      target: {
        type: 'delivery',
        id: 'dl_55120',
        label: 'Delivery dl_55120 for Nordvik Logistics',
        version: '7',
      },
      changes: [
        {
          path: 'delivery.date',
          label: 'delivery date used for the driver’s route',
          before: '2026-04-02',
          after: '2026-04-03',
          beforeText: 'Thu 2 Apr',
          afterText: 'Fri 3 Apr',
        },
      ],
      related: [
        {
          entity: { type: 'route', id: 'OSL-N-12', label: 'Driver route OSL-N-12' },
          impact: 'write',
          source: 'declared',
          note: 'the pallet leaves the Thu 2 Apr route and joins the Fri 3 Apr one',
        },
        {
          entity: { type: 'account', id: 'Nordvik Logistics', label: 'Nordvik Logistics' },
          impact: 'event',
          source: 'declared',
          note: 'the customer is sent a new delivery notice',
        },
        {
          entity: { type: 'ticket', id: '74991', label: 'Ticket #74991' },
          impact: 'unknown',
          source: 'observed',
          note: 'open ticket of Nordvik Logistics: "Pallet delivery missed, please reschedule"',
        },
      ],
      invariants: [
        {
          name: 'delivery_within_window',
          label: 'delivery stays inside the customer’s booked window',
          status: 'violated',
          evidence: 'booked window Mon 30 Mar – Thu 2 Apr; new date Fri 3 Apr',
        },
      ],
    });
  });

  it('keeps the booked window for a date inside it', () => {
    const preview = previewReschedule({ delivery_id: 'dl_55120', window: '2026-03-31' });
    expect(preview.invariants).toMatchObject([{ name: 'delivery_within_window', status: 'preserved' }]);
  });

  it('reads the delivery as it is now: after a dispatcher moves it, the version and the before value follow', () => {
    changeDelivery('dl_55120', { date: '2026-04-07' });
    const preview = previewReschedule({ delivery_id: 'dl_55120', window: '2026-04-03' });
    expect(preview.target.version).toBe('8');
    expect(preview.changes[0]).toMatchObject({ before: '2026-04-07', beforeText: 'Tue 7 Apr' });
    expect(versionOf({ type: 'delivery', id: 'dl_55120' })).toBe('8');
  });

  it('throws for a delivery the dataset does not have (the step cannot be verified)', () => {
    expect(() => previewReschedule({ delivery_id: 'dl_99999', window: '2026-04-03' })).toThrow(
      'there is no delivery dl_99999',
    );
  });
});

describe('issue_refund preview', () => {
  it('drops the invoice balance in dollars, within the balance, and flags an invoice of another account', () => {
    expect(previewRefund({ invoice_id: 'in_74119', amount: 148_900 }, ctx)).toEqual({
      target: {
        type: 'invoice',
        id: 'in_74119',
        label: 'Invoice in_74119 (Halvorsen Freight)',
        version: '3',
      },
      changes: [
        {
          path: 'invoice.balance',
          label: 'balance the customer still owes',
          before: 148_900,
          after: 0,
          beforeText: '$1,489.00',
          afterText: '$0.00',
        },
      ],
      related: [
        {
          entity: { type: 'payment', id: 'refund-in_74119', label: 'Card refund on in_74119' },
          impact: 'write',
          source: 'declared',
          note: '$1,489.00 goes back to the card that paid it; it cannot be taken back',
        },
        {
          entity: { type: 'ticket', id: '74992', label: 'Ticket #74992' },
          impact: 'unknown',
          source: 'observed',
          note: 'open ticket of Halvorsen Freight: "Invoice question"',
        },
      ],
      invariants: [
        {
          name: 'refund_within_balance',
          label: 'the refund is no more than the invoice’s balance',
          status: 'preserved',
          evidence: 'refund $1,489.00; balance $1,489.00',
        },
        {
          name: 'refund_on_ticket_account',
          label: 'the invoice belongs to the account the ticket is about',
          status: 'violated',
          evidence: `invoice in_74119 is Halvorsen Freight's; ticket #74991 is ${freightContext.account}'s`,
        },
      ],
    });
  });

  it('says a refund over the balance breaks it, and the account rule is unknown without a ticket', () => {
    const noTicket = { ...ctx, plan: { ...plan, context: {} } };
    const preview = previewRefund({ invoice_id: 'in_74121', amount: 5_000 }, noTicket);
    expect(preview.changes[0]).toMatchObject({ beforeText: '$45.00', afterText: '-$5.00' });
    expect(preview.invariants).toEqual([
      expect.objectContaining({
        name: 'refund_within_balance',
        status: 'violated',
        evidence: 'refund $50.00; balance $45.00',
      }),
      expect.objectContaining({
        name: 'refund_on_ticket_account',
        status: 'unknown',
        evidence: 'the plan names no ticket',
      }),
    ]);
  });
});

describe('the freight tools', () => {
  it('preview the steps that change the dataset, through the tool definitions', async () => {
    expect(
      (await rescheduleDelivery.preview?.({ delivery_id: 'dl_55120', window: '2026-04-03' }, ctx))?.target,
    ).toMatchObject({ type: 'delivery', version: '7' });
    expect(
      (await issueRefund.preview?.({ invoice_id: 'in_74120', amount: 100 }, ctx))?.invariants,
    ).toMatchObject([{ status: 'preserved' }, { status: 'preserved' }]);
    // Replies change the helpdesk, outside the dataset: no preview.
    expect(sendReply.preview).toBeUndefined();
  });

  it('write days as the card does', () => {
    expect(['2026-04-03', '2026-04-06', '2026-12-31'].map(dayLabel)).toEqual([
      'Fri 3 Apr',
      'Mon 6 Apr',
      'Thu 31 Dec',
    ]);
  });
});
