// Seeded randomness for the demo host. Everything the simulation draws comes from here so one seed
// reproduces one run: the load waves, the latency samples, the PIDs and the garbage bytes.

/** mulberry32: tiny, fast, good enough for a simulation (not for anything secret). */
export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0 || 0x9e3779b9;
  }

  /** Uniform in [0, 1). */
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  range(lo: number, hi: number): number {
    return lo + (hi - lo) * this.next();
  }

  int(lo: number, hiInclusive: number): number {
    return lo + Math.floor(this.next() * (hiInclusive - lo + 1));
  }

  /** Standard normal (Box–Muller). */
  normal(): number {
    const u = 1 - this.next();
    const v = this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }

  /** Log-normal with the given median and shape sigma. */
  logNormal(median: number, sigma: number): number {
    return median * Math.exp(sigma * this.normal());
  }

  /** Poisson count (Knuth for small means, normal approximation above). */
  poisson(mean: number): number {
    if (mean <= 0) return 0;
    if (mean > 30) return Math.max(0, Math.round(mean + Math.sqrt(mean) * this.normal()));
    const l = Math.exp(-mean);
    let k = 0;
    let p = 1;
    do {
      k++;
      p *= this.next();
    } while (p > l);
    return k - 1;
  }

  hex(bytes: number): string {
    let s = '';
    for (let i = 0; i < bytes; i++) s += this.int(0, 255).toString(16).padStart(2, '0');
    return s;
  }

  fork(salt: number): Rng {
    return new Rng(hash32(this.state ^ Math.imul(salt, 0x85ebca6b)));
  }
}

export function hash32(x: number): number {
  let h = x >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d);
  h = Math.imul(h ^ (h >>> 15), 0x846ca68b);
  return (h ^ (h >>> 16)) >>> 0;
}

/** Deterministic pseudo-random value in [0,1) for an integer lattice point under a seed. */
function lattice(seed: number, i: number): number {
  return hash32(seed ^ hash32(i | 0)) / 4294967296;
}

/**
 * Smooth 1-D value noise in [-1, 1]: the same (seed, x) always gives the same value, so the load at a
 * given simulated instant does not depend on how often or in which steps the simulation was advanced.
 */
export function valueNoise(seed: number, x: number): number {
  const i = Math.floor(x);
  const f = x - i;
  const s = f * f * (3 - 2 * f);
  const a = lattice(seed, i);
  const b = lattice(seed, i + 1);
  return (a + (b - a) * s) * 2 - 1;
}

/** Uniform [0,1) for an integer slot: used to decide per time-slot events (bursts) reproducibly. */
export function slotRandom(seed: number, slot: number): number {
  return lattice(seed ^ 0x5bd1e995, slot);
}
