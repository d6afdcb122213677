// The offered load: requests arrive in waves (a 10–20 min sinusoid), with slow noise and occasional
// bursts. The rate is a pure function of (seed, simulated time), so it does not depend on how the
// simulation happens to be stepped.
import { Rng, slotRandom, valueNoise } from './rng';

export interface RequestShape {
  promptTokens: number;
  outputTokens: number;
}

/** Mean sizes of this deployment's agentic, long-context traffic. */
export const MEAN_PROMPT_TOKENS = 21_000;
export const MEAN_OUTPUT_TOKENS = 850;
const BASE_RATE = 2.9;
const BURST_SLOT_MS = 5 * 60_000;

export class LoadModel {
  private readonly periodMs: number;
  private readonly phase: number;

  constructor(private readonly seed: number) {
    const r = new Rng(seed ^ 0x1234567);
    this.periodMs = r.range(10, 20) * 60_000;
    this.phase = r.range(0, 2 * Math.PI);
  }

  /** Offered request rate (req/s) at simulated time t (epoch ms). */
  rate(t: number): number {
    const wave = 1 + 0.35 * Math.sin((2 * Math.PI * t) / this.periodMs + this.phase);
    const noise = 1 + 0.15 * valueNoise(this.seed, t / 90_000) + 0.05 * valueNoise(this.seed ^ 7, t / 11_000);
    return Math.max(0, BASE_RATE * wave * noise * this.burst(t));
  }

  /** A burst starts in roughly one 5-minute slot in eight, lasts 1–3 minutes and ramps up and down. */
  burst(t: number): number {
    const slot = Math.floor(t / BURST_SLOT_MS);
    let m = 1;
    for (const s of [slot - 1, slot]) {
      if (slotRandom(this.seed, s) > 0.125) continue;
      const start = s * BURST_SLOT_MS + slotRandom(this.seed + 1, s) * BURST_SLOT_MS * 0.5;
      const len = 60_000 + slotRandom(this.seed + 2, s) * 120_000;
      const peak = 1.5 + slotRandom(this.seed + 3, s) * 0.7;
      if (t < start || t > start + len) continue;
      const x = (t - start) / len;
      m = Math.max(m, 1 + (peak - 1) * Math.sin(Math.PI * x));
    }
    return m;
  }

  /** Target prefix-cache hit rate of the traffic mix (agentic turns share long prefixes). */
  cacheHitTarget(t: number): number {
    return 0.6 + 0.12 * valueNoise(this.seed ^ 99, t / 240_000);
  }

  /** One request's sizes; long-tailed like real agent traffic. */
  sample(rng: Rng): RequestShape {
    const promptTokens = Math.round(
      Math.min(120_000, Math.max(300, rng.logNormal(MEAN_PROMPT_TOKENS * 0.8, 0.6))),
    );
    const outputTokens = Math.round(
      Math.min(16_000, Math.max(8, rng.logNormal(MEAN_OUTPUT_TOKENS * 0.75, 0.7))),
    );
    return { promptTokens, outputTokens };
  }
}
