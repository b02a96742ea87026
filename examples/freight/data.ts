/**
 * A small bundled dataset standing in for the freight company's systems, so the example's `checks`
 * and `annotate` hooks have something real to cross-reference. A real deployment reads its own data.
 */
export interface Invoice {
  readonly id: string;
  readonly account: string;
  /** Outstanding balance in cents. */
  readonly balance: number;
  readonly currency: 'USD';
}

export interface Ticket {
  readonly id: string;
  readonly account: string;
  readonly subject: string;
}

export interface Delivery {
  readonly id: string;
  readonly account: string;
  readonly window: string;
}

export const invoices: ReadonlyMap<string, Invoice> = new Map(
  [
    { id: 'in_74119', account: 'Halvorsen Freight', balance: 148_900, currency: 'USD' },
    { id: 'in_74120', account: 'Nordvik Logistics', balance: 62_350, currency: 'USD' },
    { id: 'in_74121', account: 'Nordvik Logistics', balance: 4_500, currency: 'USD' },
  ].map((invoice) => [invoice.id, invoice as Invoice]),
);

export const tickets: ReadonlyMap<string, Ticket> = new Map(
  [
    { id: '74991', account: 'Nordvik Logistics', subject: 'Pallet delivery missed, please reschedule' },
    { id: '74992', account: 'Halvorsen Freight', subject: 'Invoice question' },
  ].map((ticket) => [ticket.id, ticket]),
);

export const deliveries: ReadonlyMap<string, Delivery> = new Map(
  [{ id: 'dl_55120', account: 'Nordvik Logistics', window: '2026-04-02' }].map((delivery) => [
    delivery.id,
    delivery,
  ]),
);
