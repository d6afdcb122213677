// Typed arrays for one live evaluation, used again by the next one. The live push evaluates every signal of a
// target at every scrape, and the evaluator's columns (a Float64Array per signal and per intermediate, each as
// long as the rate window) are read once for their newest value and dropped: a few hundred arrays per second,
// each a backing store outside the heap that the GC has to find, account and free. Inside withScratchArrays
// the evaluator takes them from here instead; outside it (review, charts, a restart's check) every call gets
// new arrays as before, since those results are kept.
//
// The rule that makes this safe: nothing taken here may outlive the call of withScratchArrays that took it. The
// caller reads the values it needs before returning; memos (presence, bucket plans, prepared prefixes) never
// take their arrays from here.

type Typed = Float64Array | Uint8Array | Int8Array | Int32Array;

/**
 * Evaluations a length may go unused before its arrays are dropped. The targets of a deployment are evaluated in
 * turn and their windows' row counts differ by one now and then (a scrape early or late): dropping a length at
 * the first evaluation that skips it made each target allocate its arrays again every round.
 */
const IDLE_RELEASES_KEPT = 8;

/** Arrays of one kind, by length: the ones handed out in this evaluation, and the ones free again. */
class Shelf<T extends Typed> {
  private readonly byLength = new Map<number, { arrays: T[]; used: number; idle: number }>();

  constructor(private readonly make: (n: number) => T) {}

  take(n: number): T {
    let slot = this.byLength.get(n);
    if (!slot) this.byLength.set(n, (slot = { arrays: [], used: 0, idle: 0 }));
    if (slot.used < slot.arrays.length) return slot.arrays[slot.used++];
    const a = this.make(n);
    slot.arrays.push(a);
    slot.used++;
    return a;
  }

  /** Everything is free again; lengths unused for IDLE_RELEASES_KEPT evaluations are dropped (the window moved). */
  release(): void {
    for (const [n, slot] of this.byLength) {
      if (slot.used === 0) {
        if (++slot.idle > IDLE_RELEASES_KEPT) this.byLength.delete(n);
      } else {
        // All of them stay, as many as the neediest evaluation of this length took: the targets take turns,
        // and the router needing fewer than a server must not make the next server's evaluation allocate.
        slot.idle = 0;
        slot.used = 0;
      }
    }
  }

  /** Arrays held (tests of the bound). */
  get held(): number {
    let k = 0;
    for (const slot of this.byLength.values()) k += slot.arrays.length;
    return k;
  }
}

const shelves = {
  f64: new Shelf((n) => new Float64Array(n)),
  u8: new Shelf((n) => new Uint8Array(n)),
  i8: new Shelf((n) => new Int8Array(n)),
  i32: new Shelf((n) => new Int32Array(n)),
};

let active = false;

/**
 * Runs `fn` with the evaluator taking its arrays from the shelves; every array it took is free again once it
 * returns, so `fn` must copy out what it keeps. Nested calls share the outer one's arrays.
 */
export function withScratchArrays<T>(fn: () => T): T {
  if (active) return fn();
  active = true;
  try {
    return fn();
  } finally {
    active = false;
    shelves.f64.release();
    shelves.u8.release();
    shelves.i8.release();
    shelves.i32.release();
  }
}

/** A Float64Array of n, filled with `fill` (0 unless given), as `new Float64Array(n).fill(fill)` gives. */
export function f64(n: number, fill = 0): Float64Array {
  if (!active) return fill === 0 ? new Float64Array(n) : new Float64Array(n).fill(fill);
  return shelves.f64.take(n).fill(fill);
}

export function u8(n: number): Uint8Array {
  return active ? shelves.u8.take(n).fill(0) : new Uint8Array(n);
}

export function i8(n: number, fill = 0): Int8Array {
  if (!active) return fill === 0 ? new Int8Array(n) : new Int8Array(n).fill(fill);
  return shelves.i8.take(n).fill(fill);
}

export function i32(n: number, fill = 0): Int32Array {
  if (!active) return fill === 0 ? new Int32Array(n) : new Int32Array(n).fill(fill);
  return shelves.i32.take(n).fill(fill);
}

/** Arrays the shelves hold between evaluations (tests: bounded by one evaluation's needs). */
export function scratchArraysHeld(): number {
  return shelves.f64.held + shelves.u8.held + shelves.i8.held + shelves.i32.held;
}
