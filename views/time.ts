/**
 * Times and dates for people, in UTC unless a time zone is given. Time is passed in (`now`), never read.
 */

/** How a view shows instants: `now` decides what "today" is; `tz` is an IANA zone (default UTC). */
export interface TimeOptions {
  /** Milliseconds since the epoch. */
  readonly now: number;
  readonly tz?: string;
}

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'] as const;
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'] as const;

/**
 * A calendar date written `YYYY-MM-DD`, for people: "Fri 3 Apr 2026". Anything else comes back as is.
 * Dates have no time zone, so none is applied.
 */
export function formatDay(isoDate: string): string {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(isoDate);
  if (!match) return isoDate;
  const [, year = '', month = '', day = ''] = match;
  const date = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  if (Number.isNaN(date.getTime()) || date.getUTCDate() !== Number(day)) return isoDate;
  return `${WEEKDAYS[date.getUTCDay()]} ${Number(day)} ${MONTHS[date.getUTCMonth()]} ${year}`;
}

interface ZonedParts {
  readonly weekday: string;
  readonly day: string;
  readonly month: string;
  readonly year: string;
  readonly hour: string;
  readonly minute: string;
  readonly zone: string;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function partsIn(ms: number, tz: string): ZonedParts {
  let formatter = formatters.get(tz);
  if (formatter === undefined) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      weekday: 'short',
      day: 'numeric',
      month: 'short',
      year: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
      timeZoneName: 'short',
    });
    formatters.set(tz, formatter);
  }
  const parts = Object.fromEntries(formatter.formatToParts(ms).map((part) => [part.type, part.value]));
  return {
    weekday: parts.weekday ?? '',
    day: parts.day ?? '',
    month: parts.month ?? '',
    year: parts.year ?? '',
    hour: parts.hour ?? '',
    minute: parts.minute ?? '',
    zone: parts.timeZoneName ?? tz,
  };
}

/**
 * An instant for people: "14:05 UTC" on the day of `now`, "Thu 2 Apr, 14:05 UTC" in the same year,
 * "Thu 2 Apr 2027, 14:05 UTC" otherwise. Without `now`, the date is always shown.
 */
export function formatInstant(
  ms: number,
  options: { readonly now?: number; readonly tz?: string } = {},
): string {
  const tz = options.tz ?? 'UTC';
  const at = partsIn(ms, tz);
  const time = `${at.hour}:${at.minute} ${at.zone}`;
  if (options.now !== undefined) {
    const today = partsIn(options.now, tz);
    if (today.year === at.year && today.month === at.month && today.day === at.day) return time;
    if (today.year === at.year) return `${at.weekday} ${at.day} ${at.month}, ${time}`;
  }
  return `${at.weekday} ${at.day} ${at.month} ${at.year}, ${time}`;
}

/** A span for people, rounded down to its largest units: "45 min", "2 h", "2 h 30 min", "3 days". */
export function formatSpan(ms: number): string {
  const minutes = Math.floor(Math.abs(ms) / 60_000);
  if (minutes < 1) return 'less than a minute';
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) {
    const rest = minutes % 60;
    return rest === 0 ? `${hours} h` : `${hours} h ${rest} min`;
  }
  return `${Math.floor(hours / 24)} days`;
}

/**
 * "12:00 UTC (in 2 h)", "09:00 UTC (1 h ago)" or "10:00 UTC (now)". The span is rounded to the nearest
 * minute, so a card drawn again a moment later says the same ("in 2 h", not "in 1 h 59 min").
 */
export function formatInstantFromNow(ms: number, options: TimeOptions): string {
  const span = Math.round((ms - options.now) / 60_000) * 60_000;
  const when =
    Math.abs(ms - options.now) < 60_000
      ? 'now'
      : span > 0
        ? `in ${formatSpan(span)}`
        : `${formatSpan(span)} ago`;
  return `${formatInstant(ms, options)} (${when})`;
}
