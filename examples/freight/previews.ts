/**
 * The freight tools' `preview` hooks (issue 19): what each step will change in the example dataset,
 * read at the entity's current version — before → after in an approver's words, the related entities
 * it touches (declared by the tool, or observed in the data), and the domain rules it keeps or breaks.
 * A target that does not exist throws: the step is then marked "could not verify" (its `checks` hook
 * refuses it anyway).
 *
 * Notes and replies have no preview: the tickets they change live in the helpdesk, outside this
 * dataset, and a reply after a note on the same ticket would find the ticket moved by the note — a
 * precondition read before the plan ran cannot hold for the second of two steps on one entity.
 */
import type { ChangeSet, Invariant, RelatedEntity, ToolHookContext } from '../../src/pipeline/index.ts';
import { formatMoney } from '../../src/pipeline/index.ts';
import { deliveries, invoices, tickets } from './data.ts';

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'] as const;
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'] as const;

/** An ISO date as the card writes it: `2026-04-03` → "Fri 3 Apr". */
export function dayLabel(isoDate: string): string {
  const date = new Date(`${isoDate}T00:00:00Z`);
  if (Number.isNaN(date.getTime())) return isoDate;
  return `${WEEKDAYS[date.getUTCDay()]} ${date.getUTCDate()} ${MONTHS[date.getUTCMonth()]}`;
}

/** The ticket this plan is about, from the plan's context (`{ "ticket_id": "74991" }`). */
export function planTicket(ctx: Pick<ToolHookContext, 'plan'>) {
  const id = ctx.plan.context?.ticket_id;
  return typeof id === 'string' ? tickets.get(id) : undefined;
}

/** Open tickets on an account: whether the step touches them is not known, so they say `unknown`. */
function ticketsOf(account: string): RelatedEntity[] {
  return [...tickets.values()]
    .filter((ticket) => ticket.account === account && ticket.status === 'open')
    .map((ticket) => ({
      entity: { type: 'ticket', id: ticket.id, label: `Ticket #${ticket.id}` },
      impact: 'unknown' as const,
      source: 'observed' as const,
      note: `open ticket of ${account}: "${ticket.subject}"`,
    }));
}

/** `reschedule_delivery`: the delivery's date moves; the driver's route is rebuilt; the booked window holds or not. */
export function previewReschedule(args: { delivery_id: string; window: string }): ChangeSet {
  const delivery = deliveries.get(args.delivery_id);
  if (delivery === undefined) throw new Error(`there is no delivery ${args.delivery_id}`);
  const within = args.window >= delivery.bookedFrom && args.window <= delivery.bookedUntil;
  const booked = `${dayLabel(delivery.bookedFrom)} – ${dayLabel(delivery.bookedUntil)}`;
  return {
    target: {
      type: 'delivery',
      id: delivery.id,
      label: `Delivery ${delivery.id} for ${delivery.account}`,
      version: String(delivery.version),
    },
    changes: [
      {
        path: 'delivery.date',
        label: 'delivery date used for the driver’s route',
        before: delivery.date,
        after: args.window,
        beforeText: dayLabel(delivery.date),
        afterText: dayLabel(args.window),
      },
    ],
    related: [
      {
        entity: { type: 'route', id: delivery.route, label: `Driver route ${delivery.route}` },
        impact: 'write',
        source: 'declared',
        note: `the pallet leaves the ${dayLabel(delivery.date)} route and joins the ${dayLabel(args.window)} one`,
      },
      {
        entity: { type: 'account', id: delivery.account, label: delivery.account },
        impact: 'event',
        source: 'declared',
        note: 'the customer is sent a new delivery notice',
      },
      ...ticketsOf(delivery.account),
    ],
    invariants: [
      {
        name: 'delivery_within_window',
        label: 'delivery stays inside the customer’s booked window',
        status: within ? 'preserved' : 'violated',
        evidence: `booked window ${booked}; new date ${dayLabel(args.window)}`,
      },
    ],
  };
}

/** `issue_refund`: the invoice's balance drops; the refund stays within it, on the plan's account or not. */
export function previewRefund(
  args: { invoice_id: string; amount: number },
  ctx: Pick<ToolHookContext, 'plan'>,
): ChangeSet {
  const invoice = invoices.get(args.invoice_id);
  if (invoice === undefined) throw new Error(`there is no invoice ${args.invoice_id}`);
  const after = invoice.balance - args.amount;
  const money = (minor: number) => formatMoney(minor, invoice.currency);
  const ticket = planTicket(ctx);
  const sameAccount: Invariant =
    ticket === undefined
      ? {
          name: 'refund_on_ticket_account',
          label: 'the invoice belongs to the account the ticket is about',
          status: 'unknown',
          evidence: 'the plan names no ticket',
        }
      : {
          name: 'refund_on_ticket_account',
          label: 'the invoice belongs to the account the ticket is about',
          status: invoice.account === ticket.account ? 'preserved' : 'violated',
          evidence: `invoice ${invoice.id} is ${invoice.account}'s; ticket #${ticket.id} is ${ticket.account}'s`,
        };
  return {
    target: {
      type: 'invoice',
      id: invoice.id,
      label: `Invoice ${invoice.id} (${invoice.account})`,
      version: String(invoice.version),
    },
    changes: [
      {
        path: 'invoice.balance',
        label: 'balance the customer still owes',
        before: invoice.balance,
        after,
        beforeText: money(invoice.balance),
        afterText: money(after),
      },
    ],
    related: [
      {
        entity: { type: 'payment', id: `refund-${invoice.id}`, label: `Card refund on ${invoice.id}` },
        impact: 'write',
        source: 'declared',
        note: `${money(args.amount)} goes back to the card that paid it; it cannot be taken back`,
      },
      ...ticketsOf(invoice.account),
    ],
    invariants: [
      {
        name: 'refund_within_balance',
        label: 'the refund is no more than the invoice’s balance',
        status: args.amount <= invoice.balance ? 'preserved' : 'violated',
        evidence: `refund ${money(args.amount)}; balance ${money(invoice.balance)}`,
      },
      sameAccount,
    ],
  };
}
