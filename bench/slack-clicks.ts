import {
  type Block,
  buildBlockActionsPayload,
  buttonAction,
  type EmulatedMessage,
  signSlackRequest,
} from '../src/emulator/index.ts';

/** A signed approve click on `card`, as Slack sends it (signed just before sending). */
export function approveRequest(
  card: EmulatedMessage,
  signingSecret: string,
): { body: string; headers: Headers } {
  const payload = buildBlockActionsPayload({
    user: { id: 'U0OP1' },
    container: { type: 'message', channel: { id: card.channel }, message: card },
    action: buttonAction(card.blocks, 'approve'),
  });
  const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
  const headers = new Headers({
    'content-type': 'application/x-www-form-urlencoded',
    ...signSlackRequest(signingSecret, body, Math.floor(Date.now() / 1000)),
  });
  return { body, headers };
}

/** How many buttons `blocks` hold, anywhere (actions blocks, accessories). */
export function buttonCount(blocks: readonly Block[] | readonly unknown[]): number {
  const count = (value: unknown): number => {
    if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + count(item), 0);
    if (typeof value !== 'object' || value === null) return 0;
    const own = (value as { type?: unknown }).type === 'button' ? 1 : 0;
    return own + Object.values(value).reduce((sum: number, item) => sum + count(item), 0);
  };
  return count(blocks);
}
