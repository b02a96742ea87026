/**
 * Trigger ids: what an interaction gives the bot so it may open or push a modal, once, within 3 s.
 *
 * Slack's look like `7777777777.1111111111.abcdef0123456789` and are opaque. The ones minted here keep
 * that shape and carry what the emulator needs to answer as Slack would: the time they were minted (epoch
 * ms, in the first part), for `expired_trigger_id`, and the acting user (hex of the user id, in the last
 * part), so views.push finds *that user's* modal stack. Foreign trigger ids of the same shape are accepted
 * too; they carry no user and never expire.
 */
import { randomInt } from 'node:crypto';

const TRIGGER_ID = /^\d+\.\d+\.[0-9a-f]+$/;
const USER_ID = /^[UW][A-Z0-9]{2,}$/;

/** How long Slack honours a trigger id after the interaction that produced it. */
export const SLACK_TRIGGER_TTL_MS = 3_000;

/** Mint a trigger id for `userId`. `nowMs` and `sequence` default to the clock and a random number. */
export function mintTriggerId(
  userId: string,
  options: { readonly nowMs?: number; readonly sequence?: number } = {},
): string {
  const mintedAt = Math.floor(options.nowMs ?? Date.now());
  const sequence = options.sequence ?? randomInt(1_000_000_000, 9_999_999_999);
  return `${mintedAt}.${sequence}.${Buffer.from(userId, 'utf8').toString('hex')}`;
}

/** True when `value` has the shape of a Slack trigger id. */
export function isTriggerId(value: string): boolean {
  return TRIGGER_ID.test(value);
}

/** The user a trigger id minted by {@link mintTriggerId} was issued to; undefined for foreign ids. */
export function triggerIdUser(triggerId: string): string | undefined {
  if (!isTriggerId(triggerId)) return undefined;
  const hex = triggerId.slice(triggerId.lastIndexOf('.') + 1);
  if (hex.length % 2 !== 0) return undefined;
  const decoded = Buffer.from(hex, 'hex').toString('utf8');
  return USER_ID.test(decoded) ? decoded : undefined;
}

/** When a trigger id minted by {@link mintTriggerId} was minted (epoch ms); undefined for foreign ids. */
export function triggerIdMintedAt(triggerId: string): number | undefined {
  if (triggerIdUser(triggerId) === undefined) return undefined;
  return Number(triggerId.slice(0, triggerId.indexOf('.')));
}

/**
 * Whether a trigger id can no longer be exchanged at `nowMs`: minted here and `ttlMs` or more ago.
 * Foreign ids never expire (their time is unknown).
 */
export function isTriggerExpired(triggerId: string, nowMs: number, ttlMs: number): boolean {
  const mintedAt = triggerIdMintedAt(triggerId);
  return mintedAt !== undefined && nowMs - mintedAt >= ttlMs;
}
