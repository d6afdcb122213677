// A synthetic PD session recorded to a file, for the review benchmark and tests: the queueing model of
// test/support/synthetic-pd-session.ts stepped one second at a time and written with the real RecordingWriter,
// with the deployment in the header that a live session would have: a one-host deployment is a fleet of one, its
// services named `prefill-0`, `decode-0`, `router` and each its own target (fleet-of-one.ts). Kept between runs (generating 24 h takes
// minutes); `fresh` regenerates.
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { FORMAT_MINOR_VERSION } from '../src/main/core/recording/format';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock, type Clock } from '../src/main/core/clock';
import type { DeploymentConfig } from '../src/shared/domain';
import { RecordingWriter } from '../src/main/core/recording';
import { REVIEW_OVERVIEW } from '../src/main/core/review/overview-table';
import { fleetOfOne } from '../src/main/core/recording/fleet-of-one';
import { SyntheticPdSession } from '../test/support/synthetic-pd-session';

export const BENCH_START = Date.UTC(2026, 0, 5, 8, 0, 0);

export const BENCH_DEPLOYMENT: DeploymentConfig = {
  id: 'demo',
  name: 'Synthetic PD deployment',
  services: (['prefill', 'decode', 'router'] as const).map((role, i) => ({
    role,
    hostId: 'demo',
    unit: `sglang-${role}.service`,
    apiUrl: `http://127.0.0.1:${[30100, 30200, 30001][i]}`,
    metricsUrl: `http://127.0.0.1:${[30100, 30200, 29001][i]}/metrics`,
  })),
};

/** Writes `hours` of the synthetic session to `path` (replaced atomically); returns the path. */
export async function writeSyntheticRecording(
  path: string,
  hours: number,
  opts: {
    seed?: number;
    close?: boolean;
    progress?: (h: number) => void;
    /** 'no-overview': one gzip member and no overview, which review reads the slow way. */
    format?: RecordingFormat;
  } = {},
): Promise<string> {
  const sim = new SyntheticPdSession(BENCH_START, opts.seed ?? 42, hours * 3_600_000);
  // The writer's flush cadence follows simulated time, like a real session's.
  const simClock: Clock = {
    now: () => sim.now,
    // Real timers the writer can clear: one left to fire while the file is closed wrote after its end.
    setTimeout: (fn, ms) => systemClock.setTimeout(fn, ms),
    clearTimeout: (timer) => systemClock.clearTimeout(timer),
  };
  const tmp = `${path}.part`;
  const host = { id: 'demo', label: 'gpu-host-01 (synthetic)', kind: 'demo' as const };
  const named = fleetOfOne({ host, deployment: BENCH_DEPLOYMENT })!;
  const w = await RecordingWriter.open(
    tmp,
    {
      sessionId: 'synthetic',
      name: `Synthetic ${hours} h session`,
      startedAt: BENCH_START,
      host,
      deployment: named.deployment,
      fleet: named.fleet,
      appVersion: '0.1.0',
    },
    // The overview the recording service writes: review's signals.
    { clock: simClock, overview: opts.format !== 'no-overview' && REVIEW_OVERVIEW },
  );
  const ticks = Math.round(hours * 3600);
  for (let i = 0; i < ticks; i++) {
    const tick = sim.step();
    for (const s of tick.scrapes) w.appendScrape(s.ts, named.source(s.target), s.exp);
    for (const u of tick.unitStates) w.appendUnitState(u.ts, named.source(u.role), u.state);
    for (const h of tick.health) w.appendHealth(h.ts, named.source(h.role), h.health);
    for (const e of tick.events) w.appendEvent(e);
    for (const j of tick.journal) w.appendJournal({ ...j, role: named.source(j.role) });
    if (i % 4 === 0) await new Promise((r) => setImmediate(r));
    while (w.stats.queuedBytes > 8 << 20) await new Promise((r) => setTimeout(r, 5));
    if (i % 3600 === 3599) opts.progress?.((i + 1) / 3600);
  }
  if (opts.close === false) await w.flush();
  else await w.close();
  if (w.error) throw w.error;
  await rename(tmp, path);
  return path;
}

export type RecordingFormat = 'current' | 'no-overview';

/** The cached synthetic recording of `hours` (with the app's overview unless asked), generated on first use. */
export async function syntheticRecording(
  hours: number,
  fresh = false,
  format: RecordingFormat = 'current',
): Promise<string> {
  const dir = join(tmpdir(), 'pdc-review-bench');
  await mkdir(dir, { recursive: true });
  // Named by what is in it: a file cached by a run before the services were named is not taken for today's.
  const name = format === 'current' ? `v1.${FORMAT_MINOR_VERSION}-named` : `${format}-named`;
  const path = join(dir, `synthetic-${hours}h-${name}.pdrec.jsonl.gz`);
  if (fresh) await rm(path, { force: true });
  const exists = await stat(path).then(
    (s) => s.size > 0,
    () => false,
  );
  if (!exists)
    await writeSyntheticRecording(path, hours, {
      format,
      progress: (h) => process.stdout.write(`  generating: ${h.toFixed(0)} h of ${hours} h\r`),
    });
  return path;
}

const isMain = process.argv[1] !== undefined && /bench[\\/]review-fixture\.ts$/.test(process.argv[1]);
if (isMain) {
  const hours = Number(process.argv[2]) || 24;
  const format = process.argv.includes('--no-overview') ? 'no-overview' : 'current';
  syntheticRecording(hours, process.argv.includes('--fresh'), format).then(
    (p) => console.log(`\n${p}`),
    (err: unknown) => {
      console.error(err);
      process.exitCode = 1;
    },
  );
}
