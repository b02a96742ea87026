/**
 * Deterministic ids for the emulator: message timestamps, view ids and hashes, DM channel ids. No
 * randomness, so a test (or a recorded demo) gets the same ids every run; time comes from `now`.
 */
import { createHash } from 'node:crypto';

/** Mints the ids Slack would assign. One per emulator. */
export class IdMint {
  #lastTsMicros = 0n;
  #views = 0;
  #hashes = 0;

  constructor(private readonly now: () => number) {}

  /** A message ts (`"<seconds>.<6 digits>"`), strictly increasing even within one microsecond. */
  messageTs(): string {
    const micros = BigInt(Math.floor(this.now())) * 1000n;
    this.#lastTsMicros = micros > this.#lastTsMicros ? micros : this.#lastTsMicros + 1n;
    return formatTs(this.#lastTsMicros);
  }

  /** A view id such as `V0000000001`. */
  viewId(): string {
    this.#views += 1;
    return `V${this.#views.toString(36).toUpperCase().padStart(10, '0')}`;
  }

  /** A view hash (`"<seconds>.<8 hex>"`), different on every call. */
  viewHash(): string {
    this.#hashes += 1;
    return `${Math.floor(this.now() / 1000)}.${this.#hashes.toString(16).padStart(8, '0')}`;
  }
}

/** The DM channel id for a set of users: the same set always gives the same `D…` id. */
export function dmChannelId(userIds: readonly string[]): string {
  const key = [...new Set(userIds)].sort().join(',');
  return `D${createHash('sha256').update(key).digest('hex').slice(0, 10).toUpperCase()}`;
}

/** A message ts as integer microseconds, for ordering; undefined when it is not a ts. */
export function tsToMicros(ts: string): bigint | undefined {
  const match = /^(\d+)(?:\.(\d{1,6}))?$/.exec(ts);
  if (!match) return undefined;
  const [, seconds = '0', fraction = ''] = match;
  return BigInt(seconds) * 1_000_000n + BigInt(fraction.padEnd(6, '0'));
}

function formatTs(micros: bigint): string {
  return `${micros / 1_000_000n}.${(micros % 1_000_000n).toString().padStart(6, '0')}`;
}
