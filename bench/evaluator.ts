// The one signal evaluator, live and review side by side on the same synthetic PD session (the recording
// benchmark's queueing model): the live push evaluates the newest row of each target's bounded live columns
// after every scrape; review evaluates every row of the recorded columns at once. Prints the cost per scrape
// and what it means at 1 Hz for a 1P1D deployment (three targets).
import type { Role } from '../src/shared/domain';
import type { Exposition } from '../src/main/core/probes/exposition/types';
import { SignalsStore } from '../src/main/core/signals/signals-store';
import { evaluateTarget, isSignalInput } from '../src/main/core/signals/evaluate';
import { LiveColumns } from '../src/main/core/signals/live-columns';
import { extractKv } from '../src/main/core/signals/evaluate/kv-usage';
import { SyntheticPdSession } from '../test/support/synthetic-pd-session';

const MINUTES = 10;

export async function runEvaluatorBench(): Promise<void> {
  const sim = new SyntheticPdSession(Date.UTC(2026, 0, 5), 7, MINUTES * 60_000);
  // The simulation mutates its samples in place: keep a copy of every scrape so both paths read the same.
  const scrapes: { ts: number; role: Role; exp: Exposition }[] = [];
  for (let i = 0; i < MINUTES * 60; i++)
    for (const s of sim.step().scrapes)
      scrapes.push({ ts: s.ts, role: s.target as Role, exp: structuredClone(s.exp) });
  const samples = scrapes.reduce((a, s) => a + s.exp.sampleCount, 0) / scrapes.length;

  const liveMs: number[] = [];
  for (let rep = 0; rep < 3; rep++) {
    const store = new SignalsStore();
    store.open('d', ['prefill', 'decode', 'router']);
    const t0 = performance.now();
    // The live push of a scrape: the store's signals, and the monitor's KV reading of the same scrape.
    for (const s of scrapes) {
      store.ingest('d', s.ts, s.role, s.exp);
      if (s.role !== 'router') extractKv(s.exp);
    }
    liveMs.push((performance.now() - t0) / scrapes.length);
  }
  const live = Math.min(...liveMs);

  // Review: the same scrapes as whole columns per target, every row evaluated.
  const reviewMs: number[] = [];
  for (let rep = 0; rep < 3; rep++) {
    const cols = new Map<Role, LiveColumns>();
    for (const s of scrapes) {
      let c = cols.get(s.role);
      if (!c) cols.set(s.role, (c = new LiveColumns({ keepMs: Infinity, track: isSignalInput })));
      c.append(s.ts, s.exp);
    }
    const t0 = performance.now();
    for (const [role, c] of cols) evaluateTarget(c.columns(role), role);
    reviewMs.push((performance.now() - t0) / scrapes.length);
  }
  const review = Math.min(...reviewMs);
  const line = (label: string, v: string): void => void process.stdout.write(`${label.padEnd(52)}${v}\n`);
  line('scrapes (3 targets, 1 s apart)', `${scrapes.length}, ${samples.toFixed(0)} samples each`);
  line('live push: evaluate the newest row, per scrape', `${(live * 1000).toFixed(0)} µs`);
  line('review: every row at once, per scrape', `${(review * 1000).toFixed(0)} µs`);
  line('live / review per scrape', `${(live / review).toFixed(1)}×`);
  line('live evaluator CPU of a 1P1D deployment at 1 Hz', `${((live * 3) / 10).toFixed(2)} % of a core`);
}
