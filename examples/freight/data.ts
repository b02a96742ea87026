/**
 * A small bundled dataset standing in for the freight company's systems, so the example's hooks
 * (`checks`, `annotate`, `preview`) have something real to read. Each entity carries a version, a
 * counter its system bumps on every change: what `preview` reads a step's target at, and what the
 * agent checks again right before the effect. The demo changes it between approval and execution
 * (`changeDelivery`) to show a stale approval refused. A real deployment reads its own systems.
 */
export interface Invoice {
  readonly id: string;
  readonly account: string;
  /** Outstanding balance in cents. */
  readonly balance: number;
  readonly currency: 'USD';
  readonly version: number;
}

export interface Ticket {
  readonly id: string;
  readonly account: string;
  readonly subject: string;
  readonly status: 'open' | 'closed';
  readonly version: number;
}

export interface Delivery {
  readonly id: string;
  readonly account: string;
  /** The date it is scheduled for (ISO date). */
  readonly date: string;
  /** The window the customer booked (ISO dates, inclusive). */
  readonly bookedFrom: string;
  readonly bookedUntil: string;
  /** The driver's route that carries it. */
  readonly route: string;
  readonly version: number;
}

const INVOICES: readonly Invoice[] = [
  { id: 'in_74119', account: 'Halvorsen Freight', balance: 148_900, currency: 'USD', version: 3 },
  { id: 'in_74120', account: 'Nordvik Logistics', balance: 62_350, currency: 'USD', version: 5 },
  { id: 'in_74121', account: 'Nordvik Logistics', balance: 4_500, currency: 'USD', version: 2 },
];

const TICKETS: readonly Ticket[] = [
  {
    id: '74991',
    account: 'Nordvik Logistics',
    subject: 'Pallet delivery missed, please reschedule',
    status: 'open',
    version: 4,
  },
  {
    id: '74992',
    account: 'Halvorsen Freight',
    subject: 'Invoice question',
    status: 'open',
    version: 1,
  },
];

const DELIVERIES: readonly Delivery[] = [
  {
    id: 'dl_55120',
    account: 'Nordvik Logistics',
    date: '2026-04-02',
    bookedFrom: '2026-03-30',
    bookedUntil: '2026-04-02',
    route: 'OSL-N-12',
    version: 7,
  },
];

const byId = <T extends { readonly id: string }>(rows: readonly T[]) =>
  new Map(rows.map((row) => [row.id, row]));

/** The dataset as it is now; `changeDelivery` and `resetFreightData` change it. */
export const invoices: Map<string, Invoice> = byId(INVOICES);
export const tickets: Map<string, Ticket> = byId(TICKETS);
export const deliveries: Map<string, Delivery> = byId(DELIVERIES);

/** An entity's version as a precondition states it (a string), or undefined when there is no such entity. */
export function versionOf(entity: { readonly type: string; readonly id: string }): string | undefined {
  const table: ReadonlyMap<string, { readonly version: number }> | undefined =
    entity.type === 'delivery'
      ? deliveries
      : entity.type === 'invoice'
        ? invoices
        : entity.type === 'ticket'
          ? tickets
          : undefined;
  const row = table?.get(entity.id);
  return row === undefined ? undefined : String(row.version);
}

/**
 * Someone changes a delivery in the freight system (a dispatcher moves it): its version goes up, so
 * an approval made against the old version no longer holds. Returns the delivery as it is now.
 * @example changeDelivery('dl_55120', { date: '2026-04-07' }); // version 7 → 8
 */
export function changeDelivery(id: string, change: { readonly date?: string } = {}): Delivery {
  const delivery = deliveries.get(id);
  if (delivery === undefined) throw new Error(`there is no delivery ${id}`);
  const changed = { ...delivery, ...change, version: delivery.version + 1 };
  deliveries.set(id, changed);
  return changed;
}

/** Puts the dataset back as bundled (tests and the demo's repeated runs). */
export function resetFreightData(): void {
  for (const [table, rows] of [
    [invoices, INVOICES],
    [tickets, TICKETS],
    [deliveries, DELIVERIES],
  ] as const) {
    table.clear();
    for (const row of rows) (table as Map<string, typeof row>).set(row.id, row);
  }
}
