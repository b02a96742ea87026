/**
 * Trigger ids: what an interaction gives the bot so it may open or push a modal.
 *
 * Slack's look like `7777777777.1111111111.abcdef0123456789` and are opaque. The ones minted here keep
 * that shape and carry the acting user in the last part (hex of the user id), so the emulator can find
 * *that user's* modal stack for views.push. Foreign trigger ids of the same shape are accepted too; they
 * just carry no user.
 */
import { randomInt } from 'node:crypto';

const TRIGGER_ID = /^\d+\.\d+\.[0-9a-f]+$/;
const USER_ID = /^[UW][A-Z0-9]{2,}$/;

/** Mint a trigger id for `userId`. `nowMs` and `sequence` default to the clock and a random number. */
export function mintTriggerId(
  userId: string,
  options: { readonly nowMs?: number; readonly sequence?: number } = {},
): string {
  const seconds = Math.floor((options.nowMs ?? Date.now()) / 1000);
  const sequence = options.sequence ?? randomInt(1_000_000_000, 9_999_999_999);
  return `${seconds}.${sequence}.${Buffer.from(userId, 'utf8').toString('hex')}`;
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
