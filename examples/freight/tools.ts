import { z } from 'zod';
import { defineTool, formatMoney, isoDate, longText, money, text } from '../../src/pipeline/index.ts';
import { deliveries, invoices } from './data.ts';
import { dayLabel, planTicket, previewRefund, previewReschedule } from './previews.ts';

export const rescheduleDelivery = defineTool({
  name: 'reschedule_delivery',
  title: 'Reschedule delivery',
  effect: 'write',
  args: z.strictObject({
    delivery_id: text({ label: 'Delivery' }),
    window: isoDate({ label: 'New delivery date' }),
  }),
  // The reply and the note tell people the date: an edit that moves it flags them if they still quote the old one.
  sameThingAs: { window: ['send_reply.body', 'add_note.note'] },
  summarize: (args) => `Move delivery ${args.delivery_id} to ${dayLabel(args.window)}`,
  checks: (args) => (deliveries.has(args.delivery_id) ? [] : [`there is no delivery ${args.delivery_id}`]),
  preview: (args) => previewReschedule(args),
});

export const issueRefund = defineTool({
  name: 'issue_refund',
  title: 'Issue refund',
  effect: 'irreversible',
  args: z.strictObject({
    invoice_id: text({ label: 'Invoice' }),
    amount: money({ currency: 'USD', label: 'Amount' }),
  }),
  summarize: (args) => `Refund ${formatMoney(args.amount, 'USD')} on invoice ${args.invoice_id}`,
  checks: (args) => {
    const invoice = invoices.get(args.invoice_id);
    if (invoice === undefined)
      return [{ path: ['invoice_id'], message: `there is no invoice ${args.invoice_id}` }];
    if (args.amount > invoice.balance) {
      return [
        {
          path: ['amount'],
          message: `refund ${formatMoney(args.amount, 'USD')} exceeds the invoice balance ${formatMoney(invoice.balance, 'USD')}`,
        },
      ];
    }
    return [];
  },
  annotate: (args, ctx) => {
    const invoice = invoices.get(args.invoice_id);
    const ticket = planTicket(ctx);
    if (invoice === undefined || ticket === undefined || invoice.account === ticket.account) return [];
    return [
      `invoice ${invoice.id} belongs to ${invoice.account}, not ${ticket.account} (the account on ticket #${ticket.id})`,
    ];
  },
  preview: (args, ctx) => previewRefund(args, ctx),
});

export const sendReply = defineTool({
  name: 'send_reply',
  title: 'Reply to customer',
  effect: 'irreversible',
  args: z.strictObject({
    ticket_id: text({ label: 'Ticket' }),
    body: longText({ label: 'Reply', max: 2000 }),
  }),
  // The reply and the internal note are about the same ticket.
  sameThingAs: { ticket_id: ['add_note.ticket_id'] },
  summarize: (args) => `Reply on ticket #${args.ticket_id}`,
});

export const addNote = defineTool({
  name: 'add_note',
  title: 'Add internal note',
  effect: 'write',
  args: z.strictObject({
    ticket_id: text({ label: 'Ticket' }),
    note: longText({ label: 'Note', max: 2000 }),
  }),
  summarize: (args) => `Note on ticket #${args.ticket_id}`,
});

export const freightTools = [rescheduleDelivery, issueRefund, sendReply, addNote];
