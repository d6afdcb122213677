// An injectable clock. Pollers, timeouts, backoff and the demo host's simulation all take time from here,
// so tests can run them many times faster than real time without touching global timers.

export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  setTimeout(fn: () => void, ms: number): ClockTimer;
  clearTimeout(timer: ClockTimer): void;
  /**
   * The wall-clock epoch ms at which this clock read `ms`, for a clock that does not run at wall speed (absent:
   * it does). Lets a record stamped on this clock be put on the wall clock's time line.
   */
  wallTimeOf?(ms: number): number;
}

export interface ClockTimer {
  readonly id: number;
}

/** Wall-clock time with Node's timers. */
/** Wall time. `pending()` counts its live timers, so a shutdown can be checked to have left none behind. */
export const systemClock: Clock & { pending(): number } = (() => {
  const handles = new Map<number, NodeJS.Timeout>();
  let next = 1;
  return {
    now: () => Date.now(),
    setTimeout(fn, ms) {
      const id = next++;
      const h = setTimeout(() => {
        handles.delete(id);
        fn();
      }, ms);
      h.unref?.();
      handles.set(id, h);
      return { id };
    },
    clearTimeout(timer) {
      const h = handles.get(timer.id);
      if (h) clearTimeout(h);
      handles.delete(timer.id);
    },
    pending: () => handles.size,
  };
})();

/**
 * A clock running `speed` times faster than real time from `start`. Timers fire after ms/speed real ms.
 * Used by the demo host and by tests that need minutes of simulated behaviour in seconds.
 */
export function acceleratedClock(speed: number, start = Date.now()): Clock {
  if (!(speed > 0)) throw new RangeError(`clock speed must be > 0, got ${speed}`);
  const realStart = Date.now();
  return {
    now: () => start + (Date.now() - realStart) * speed,
    wallTimeOf: (ms) => realStart + (ms - start) / speed,
    setTimeout: (fn, ms) => systemClock.setTimeout(fn, ms / speed),
    clearTimeout: (t) => systemClock.clearTimeout(t),
  };
}

export function sleep(clock: Clock, ms: number): Promise<void> {
  return new Promise((resolve) => clock.setTimeout(resolve, ms));
}
