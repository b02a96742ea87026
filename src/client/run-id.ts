import { randomBytes } from 'node:crypto';

/**
 * A UUIDv7 generator (RFC 9562): 48 bits of Unix milliseconds, then 74 random bits, so run ids are
 * unguessable yet sort by creation time. Within one millisecond (or when the clock steps back) a
 * 12-bit counter in `rand_a` keeps one generator's ids strictly increasing.
 * @example
 * const nextRunId = createRunIdGenerator();
 * nextRunId(); // '019d47a8-6e00-7a3c-9f1e-4b2d8c0e1a77'
 */
export function createRunIdGenerator(
  clock: () => number = Date.now,
  random: (size: number) => Uint8Array = randomBytes,
): () => string {
  let lastMs = -1;
  let counter = 0;
  return () => {
    let ms = clock();
    if (ms <= lastMs) {
      ms = lastMs;
      counter++;
      // Counter exhausted: borrow the next millisecond rather than repeat or go backwards.
      if (counter > 0xfff) {
        ms = ++lastMs;
        counter = freshCounter(random);
      }
    } else {
      lastMs = ms;
      counter = freshCounter(random);
    }
    const bytes = Uint8Array.from(random(16));
    for (let i = 5, rest = ms; i >= 0; i--, rest = Math.floor(rest / 256)) bytes[i] = rest % 256;
    bytes[6] = 0x70 | (counter >> 8);
    bytes[7] = counter & 0xff;
    bytes[8] = 0x80 | ((bytes[8] ?? 0) & 0x3f);
    const hex = Buffer.from(bytes).toString('hex');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  };
}

/** A random start with the top bit clear, leaving at least 2048 increments in the millisecond. */
function freshCounter(random: (size: number) => Uint8Array): number {
  const [high = 0, low = 0] = random(2);
  return ((high & 0x07) << 8) | low;
}

/** Reads the millisecond timestamp back out of a UUIDv7. */
export function runIdTime(runId: string): number {
  return Number.parseInt(runId.replace(/-/g, '').slice(0, 12), 16);
}
