/** HTTP plumbing shared by the emulator's routes: JSON answers, bounded body reading, refused upgrades. */
import { type IncomingMessage, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';

/** Answer with a JSON body. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: { readonly [name: string]: string } = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/** Read the whole request body, or 'too_large' once it passes `limitBytes` (the rest is discarded). */
export async function readBody(req: IncomingMessage, limitBytes: number): Promise<Buffer | 'too_large'> {
  const chunks: Buffer[] = [];
  let size = 0;
  let tooLarge = false;
  for await (const chunk of req) {
    if (tooLarge) continue;
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += buffer.length;
    if (size > limitBytes) tooLarge = true;
    else chunks.push(buffer);
  }
  return tooLarge ? 'too_large' : Buffer.concat(chunks);
}

/** Refuse a WebSocket upgrade: a plain HTTP answer with a JSON body on the raw socket, then close it. */
export function refuseUpgrade(socket: Duplex, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  // The client may already be gone; nothing to report then.
  socket.on('error', () => {});
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n` +
      'content-type: application/json; charset=utf-8\r\n' +
      `content-length: ${Buffer.byteLength(text)}\r\n` +
      'connection: close\r\n\r\n' +
      text,
  );
}
