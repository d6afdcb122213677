// Cumulative histograms with fixed bucket lists, as prometheus_client and the Rust metrics exporter keep them.

export class Histogram {
  /** Non-cumulative counts per bucket; the last slot is the +Inf overflow. */
  private readonly counts: number[];
  sum = 0;
  count = 0;

  constructor(readonly buckets: readonly number[]) {
    this.counts = new Array<number>(buckets.length + 1).fill(0);
  }

  /** Adds `weight` observations of `value` (ITL is token-weighted: one observation per generated token). */
  observe(value: number, weight = 1): void {
    if (!(weight > 0)) return;
    let i = 0;
    while (i < this.buckets.length && value > this.buckets[i]) i++;
    this.counts[i] += weight;
    this.sum += value * weight;
    this.count += weight;
  }

  /** [le, cumulative count] pairs ending with +Inf. */
  cumulative(): Array<[number, number]> {
    const out: Array<[number, number]> = [];
    let acc = 0;
    for (let i = 0; i < this.buckets.length; i++) {
      acc += this.counts[i];
      out.push([this.buckets[i], acc]);
    }
    out.push([Infinity, acc + this.counts[this.buckets.length]]);
    return out;
  }

  reset(): void {
    this.counts.fill(0);
    this.sum = 0;
    this.count = 0;
  }
}

/** Bucket lists from shared/reference/sglang-metrics.md (newest versions). */
export const BUCKETS = {
  ttft: [0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400],
  itl: [
    0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06, 0.08, 0.1, 0.2, 0.4, 0.6,
    0.8, 1, 2, 4, 6, 8,
  ],
  e2e: [0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400, 600, 1200, 1800, 2400],
  queueTimeNewest: [
    0, 0.001, 0.005, 0.01, 0.05, 0.1, 0.2, 0.5, 1, 2, 3, 4, 5, 10, 15, 20, 30, 40, 50, 60, 70, 80, 90, 100,
    200, 300, 400, 500, 600, 700, 800, 900, 1000, 1200, 1400, 1600, 1800, 2000, 2500, 3000,
  ],
  queueTime: [
    0, 0.1, 0.2, 0.5, 1, 2, 3, 4, 5, 10, 15, 20, 30, 40, 50, 60, 70, 80, 90, 100, 200, 300, 400, 500, 600,
    700, 800, 900, 1000, 1200, 1400, 1600, 1800, 2000, 2500, 3000,
  ],
  kvTransferSpeedGbS: [0.1, 0.5, 1, 5, 10, 25, 50, 100, 200, 400],
  kvTransferLatencyMs: [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000],
  kvTransferBootstrapMs: [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500],
  kvTransferAllocMs: [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500],
  kvTransferTotalMb: [1, 5, 10, 50, 100, 500, 1000, 5000, 10000],
  /** smg HEAD duration buckets (0.2.4 stopped at 240). */
  routerDuration: [
    0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30, 45, 60, 90, 120, 180, 240, 300,
    480, 900, 1200, 1800, 2700, 3600, 5400, 7200,
  ],
  routerDurationLegacy: [
    0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30, 45, 60, 90, 120, 180, 240,
  ],
} as const;
