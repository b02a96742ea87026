/**
 * A preload for a child process whose clock is wrong (`node --import tsx --import <this file>`): from
 * here on `Date.now()` and `new Date()` in that process run `CS_CLOCK_SKEW_MS` ahead (negative:
 * behind) of the machine's clock — as on a replica whose NTP is broken. Test-only: nothing in src/
 * knows about it. Timers (`setTimeout`) and `performance.now()` are untouched, as they would be.
 */
const skewMs = Number(process.env.CS_CLOCK_SKEW_MS ?? '0');
if (!Number.isFinite(skewMs))
  throw new Error(`CS_CLOCK_SKEW_MS is not a number: ${process.env.CS_CLOCK_SKEW_MS}`);

const RealDate = Date;
const realNow = RealDate.now.bind(RealDate);
const skewedNow = () => realNow() + skewMs;

globalThis.Date = new Proxy(RealDate, {
  // `new Date()` is now; `new Date(x)` is x, as ever.
  construct: (target, args, newTarget) =>
    Reflect.construct(target, args.length === 0 ? [skewedNow()] : args, newTarget),
  // `Date()` called as a function: the current time as a string.
  apply: () => new RealDate(skewedNow()).toString(),
  get: (target, property, receiver) =>
    property === 'now' ? skewedNow : Reflect.get(target, property, receiver),
});
