// Typed arrays that keep their storage from scrape to scrape and double when a target outgrows them: the
// recorder's encoder and the overview table hold every kept value in one, off the JS heap's young generation.

type Grown = Float64Array | Int32Array | Uint32Array;

/** A copy of `a` with twice its room (at least `min` slots), its contents at the start. */
export function doubled<T extends Grown>(a: T, min = 0): T {
  const next = new (a.constructor as new (n: number) => T)(Math.max(a.length * 2, min, 1));
  next.set(a);
  return next;
}
