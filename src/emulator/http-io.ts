/** HTTP plumbing shared by the emulator's routes: JSON answers and bounded body reading. */
import type { IncomingMessage, ServerResponse } from 'node:http';

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
