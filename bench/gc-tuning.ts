// What src/main/gc-tuning.ts buys: the bundled core (as shipped) on the 32-worker fleet and on one 1P1D host,
// with V8's own trigger for major GCs (PD_CONSOLE_GC_TUNING=0) and with the core's, run alternately in one
// bench run so the machine's load falls on both alike. Prints each run, then the medians side by side with
// their ratio.
//   npm run bench -- gc-tuning     (BENCH_GC_PAIRS=2 pairs of runs; each run is fleet-core's, five minutes of
//                                   warm-up included: BENCH_FLEET_WARMUP_MS, BENCH_FLEET_MS etc.;
//                                   BENCH_NODE=path runs the core under another Node, see support/bundled-run.ts)
import { loadavg } from 'node:os';
import type { CoreFigures, Shapes } from './fleet-core';
import { runBundled } from './support/bundled-run';

const PAIRS = Number(process.env.BENCH_GC_PAIRS ?? 2);

interface Run {
  tuned: boolean;
  shapes: Omit<Shapes, 'mode'>;
}

const majorsPerMin = (c: CoreFigures): number =>
  (((c.span.gc.major?.n ?? 0) + (c.span.gc.incremental?.n ?? 0)) * 60_000) / c.wallMs;

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const f = (x: number, d = 1): string => (Number.isFinite(x) ? x.toFixed(d) : '–');

/** The figures of one shape that the tuning moves: all, main thread, other threads, major GCs a minute. */
function figures(c: CoreFigures): number[] {
  return [c.cpuMsPerS, c.span.main ?? NaN, c.span.others ?? NaN, majorsPerMin(c)];
}

export async function runGcTuningBench(): Promise<void> {
  const runs: Run[] = [];
  const line = (s: string): void => void process.stdout.write(`${s}\n`);
  line(`core CPU at 1 Hz, bundled: ${PAIRS} pairs of runs, V8's trigger and the core's alternating`);
  line(
    `${'run'.padEnd(22)}${'fleet: all / main / other ms/s, majors/min'.padStart(46)}${'one host: same'.padStart(40)}`,
  );
  for (let i = 0; i < PAIRS * 2; i++) {
    // Alternate which goes first in each pair, so neither always follows the other's leftovers.
    const tuned = (i + (i >> 1)) % 2 === 0;
    const env = { ...process.env, BENCH_FLEET_CHILD: '1', PD_CONSOLE_GC_TUNING: tuned ? '1' : '0' };
    const shapes = runBundled<Omit<Shapes, 'mode'>>('fleet-core', env);
    runs.push({ tuned, shapes });
    const cells = (c: CoreFigures): string => {
      const [all, main, other, majors] = figures(c);
      return `${f(all)} / ${f(main)} / ${f(other)}, ${f(majors, 0)}`;
    };
    line(
      `${`${i + 1}. ${tuned ? 'tuned' : "V8's own"}`.padEnd(22)}${cells(shapes.scale).padStart(46)}${cells(shapes.single).padStart(40)}`,
    );
  }
  const med = (tuned: boolean, shape: 'scale' | 'single', k: number): number =>
    median(runs.filter((r) => r.tuned === tuned).map((r) => figures(r.shapes[shape])[k]));
  line('');
  line(
    `${'median'.padEnd(40)}${"V8's own".padStart(12)}${'tuned'.padStart(12)}${'tuned / own'.padStart(14)}`,
  );
  const labels = [
    'all threads, ms/s',
    'main thread, ms/s',
    'other threads (GC, compiler), ms/s',
    'major GCs a minute',
  ];
  for (const [shape, name] of [
    ['scale', '32 workers on 8 hosts'],
    ['single', 'one 1P1D host'],
  ] as const) {
    line(name);
    labels.forEach((label, k) => {
      const own = med(false, shape, k);
      const tuned = med(true, shape, k);
      line(
        `  ${label.padEnd(38)}${f(own).padStart(12)}${f(tuned).padStart(12)}${f(tuned / own, 2).padStart(14)}`,
      );
    });
  }
  const { node, v8 } = runs[0].shapes.runtime;
  line(
    `Node ${node} (V8 ${v8}); load average at the end ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
}

if (require.main === module) void runGcTuningBench().then(() => process.exit(0));
