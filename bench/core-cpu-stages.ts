// The core's per-round work of one 1P1D deployment, stage by stage, on rounds it really saw: the demo host runs
// in its own process (as in core-cpu), the core scrapes it for a while and every scrape and observation is kept;
// then each stage of the core's own code replays them — the signal store's ingest (live columns + evaluator),
// KV usage of a scrape, the alert rules, the recorder's encoder — and prints its CPU per round. In-process
// and without SSH, so these figures hold still on a busy machine where core-cpu's whole-process figure does not.
import { tmpdir } from 'node:os';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { deserialize, serialize } from 'node:v8';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import type { Observation } from '@shared/domain';
import { createApp } from '../src/main/compose';
import type { CoreHooks } from '../src/main/core/core';
import { SignalsStore } from '../src/main/core/signals/signals-store';
import { extractKv } from '../src/main/core/signals/evaluate/kv-usage';
import { evaluateAlerts, initialAlertState } from '../src/main/core/alerts/engine';
import { DEFAULT_ALERT_RULES } from '../src/main/core/alerts/rules';
import { ScrapeEncoder } from '../src/main/core/recording/scrape-codec';
import { MONITOR_TARGET, monitorExposition } from '../src/main/core/recording/host-series';
import { remoteDemo, type RemoteDemo } from './core-cpu';

const CAPTURE_MS = Number(process.env.BENCH_CORE_STAGES_CAPTURE_MS ?? 40_000);
const PASSES = Number(process.env.BENCH_CORE_STAGES_PASSES ?? 30);
/** Only the stages whose label contains this (to profile one: node --cpu-prof). */
const ONLY = process.env.BENCH_CORE_STAGES_ONLY;
/**
 * A file for the captured rounds: read when it exists, written after a capture when not. Comparing two trees
 * (old and new code) on the very same rounds, and without a 40 s capture per run.
 */
const ROUNDS_FILE = process.env.BENCH_CORE_STAGES_ROUNDS;
/** Print the N functions that allocate the most per round in each stage (where the kB go). */
const SITES = Number(process.env.BENCH_CORE_STAGES_SITES ?? 0);

type Scrape = CoreHooks['scrape'][0];
export interface Round {
  scrapes: Scrape[];
  obs: Observation;
}

async function loadRounds(): Promise<Round[]> {
  if (ROUNDS_FILE && existsSync(ROUNDS_FILE)) return deserialize(readFileSync(ROUNDS_FILE)) as Round[];
  const rounds = await captureRounds();
  if (ROUNDS_FILE) writeFileSync(ROUNDS_FILE, serialize(rounds));
  return rounds;
}

export async function captureRounds(): Promise<Round[]> {
  const dir = mkdtempSync(join(tmpdir(), 'pdc-core-stages-'));
  let demo: RemoteDemo | undefined;
  const app = createApp({
    shell: 'browser',
    dataDir: dir,
    record: false,
    demoLauncher: async () => (demo = await remoteDemo()),
  });
  const rounds: Round[] = [];
  let pending: Scrape[] = [];
  app.core.hooks.on('scrape', (e) => pending.push(e));
  app.core.hooks.on('observed', (obs) => {
    rounds.push({ scrapes: pending, obs });
    pending = [];
  });
  try {
    const s = await app.core.openDemo({});
    await new Promise((r) => setTimeout(r, CAPTURE_MS));
    await app.core.closeDeployment({ deploymentId: s.deployment.id });
  } finally {
    await app.shutdown();
    void demo;
    rmSync(dir, { recursive: true, force: true });
  }
  // The first rounds are the deployment opening (series first seen, caches cold): not the steady state.
  return rounds.slice(5);
}

/**
 * Replays the rounds PASSES times (times shifted on each pass so they keep moving forward): µs per round of the
 * quickest pass and the median one. The quickest is the figure to compare: on a busy machine a pass is only
 * ever slowed down by the others, never sped up.
 */
export function time(
  rounds: Round[],
  setup: () => (r: Round, shift: number) => void,
): { min: number; median: number } {
  const span = rounds[rounds.length - 1].obs.ts - rounds[0].obs.ts + 1000;
  // One pass to warm the code up, then the measured ones on the same state (as a long session has it).
  const step = setup();
  for (const r of rounds) step(r, 0);
  const passes: number[] = [];
  for (let p = 1; p <= PASSES; p++) {
    const t0 = process.cpuUsage();
    for (const r of rounds) step(r, p * span);
    const c = process.cpuUsage(t0);
    passes.push((c.user + c.system) / rounds.length);
  }
  passes.sort((a, b) => a - b);
  return { min: passes[0], median: passes[passes.length >> 1] };
}

interface HeapNode {
  selfSize: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children: HeapNode[];
}

/** The SITES functions with the most bytes allocated in their own code, per round. */
function topSites(head: HeapNode, rounds: number): string[] {
  const bySite = new Map<string, number>();
  const walk = (n: HeapNode): void => {
    const f = n.callFrame;
    const site = `${f.functionName || '(anonymous)'} ${f.url.split('/').slice(-2).join('/')}:${f.lineNumber + 1}`;
    bySite.set(site, (bySite.get(site) ?? 0) + n.selfSize);
    for (const c of n.children) walk(c);
  };
  walk(head);
  return [...bySite]
    .sort((a, b) => b[1] - a[1])
    .slice(0, SITES)
    .map(([site, bytes]) => `      ${(bytes / rounds / 1024).toFixed(1).padStart(6)} kB  ${site}`);
}

/**
 * JS heap bytes the stage allocates per round, garbage included (V8's sampling heap profiler, every 512 bytes on
 * average): what the young generation has to scavenge. Typed arrays' backing stores live outside the heap and
 * are not in it; their views are.
 */
export async function allocated(
  rounds: Round[],
  setup: () => (r: Round, shift: number) => void,
): Promise<number> {
  const span = rounds[rounds.length - 1].obs.ts - rounds[0].obs.ts + 1000;
  const step = setup();
  for (const r of rounds) step(r, 0);
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.enable');
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 512,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  const passes = 5;
  for (let p = 1; p <= passes; p++) for (const r of rounds) step(r, p * span);
  const { profile } = await session.post('HeapProfiler.stopSampling');
  session.disconnect();
  const sum = (n: HeapNode): number => n.children.reduce((a, c) => a + sum(c), n.selfSize);
  const head = profile.head as HeapNode;
  if (SITES > 0) process.stdout.write(`${topSites(head, passes * rounds.length).join('\n')}\n`);
  return sum(head) / (passes * rounds.length);
}

const shifted = (o: Observation, shift: number): Observation => ({ ...o, ts: o.ts + shift });

export async function runCoreCpuStagesBench(): Promise<void> {
  const rounds = await loadRounds();
  const scrapes = rounds.reduce((n, r) => n + r.scrapes.length, 0);
  const samples = rounds.reduce((n, r) => n + r.scrapes.reduce((m, s) => m + s.exposition.sampleCount, 0), 0);
  const line = (label: string, v: string): void => void process.stdout.write(`${label.padEnd(64)}${v}\n`);
  line(
    'rounds captured from the demo host (1P1D, 1 Hz)',
    `${rounds.length} (${(scrapes / rounds.length).toFixed(1)} scrapes, ${(samples / rounds.length).toFixed(0)} samples per round)`,
  );
  const id = rounds[0].obs.deploymentId;
  const roles = [...new Set(rounds[0].obs.services.map((s) => s.role))];

  const stages: [string, () => (r: Round, shift: number) => void][] = [
    [
      'signals store: ingest of the scrapes (live columns + evaluator)',
      () => {
        const store = new SignalsStore();
        store.open(id, roles);
        return (r, shift) => {
          for (const s of r.scrapes) store.ingest(id, s.ts + shift, s.role, s.exposition, s.id);
        };
      },
    ],
    [
      'signals store: ingest of the observation',
      () => {
        const store = new SignalsStore();
        store.open(id, roles);
        return (r, shift) => void store.ingestObservation(shifted(r.obs, shift));
      },
    ],
    [
      'KV usage of each server scrape (the monitor, extractKv)',
      () => (r) => {
        for (const s of r.scrapes) if (s.role !== 'router') extractKv(s.exposition);
      },
    ],
    [
      'alert rules over the latest values (default rules)',
      () => {
        const store = new SignalsStore();
        store.open(id, roles);
        let state = initialAlertState();
        return (r, shift) => {
          for (const s of r.scrapes) store.ingest(id, s.ts + shift, s.role, s.exposition, s.id);
          store.ingestObservation(shifted(r.obs, shift));
          state = evaluateAlerts(DEFAULT_ALERT_RULES, state, {
            ts: r.obs.ts + shift,
            roles,
            values: store.latest(id),
          }).state;
        };
      },
    ],
    [
      'recorder: encoding of the scrapes and the monitor row',
      () => {
        const enc = new ScrapeEncoder();
        return (r, shift) => {
          for (const s of r.scrapes) enc.encode(s.ts + shift, s.role, s.exposition);
          enc.encode(r.obs.ts + shift, MONITOR_TARGET, monitorExposition(shifted(r.obs, shift)));
        };
      },
    ],
  ];
  const alone = new Map<string, number>();
  for (const [label, setup] of stages) {
    if (ONLY && !label.includes(ONLY)) continue;
    const { min, median } = time(rounds, setup);
    alone.set(label, min);
    const bytes = await allocated(rounds, setup);
    line(
      `  ${label}`,
      `${min.toFixed(0)} µs per round (median pass ${median.toFixed(0)}), ${(bytes / 1024).toFixed(0)} kB allocated`,
    );
  }
  // The alert stage includes both ingests; what the rules themselves cost is the difference.
  const [scrapeIngest, obsIngest, , withAlerts] = stages.map(([label]) => alone.get(label));
  if (scrapeIngest !== undefined && obsIngest !== undefined && withAlerts !== undefined)
    line(
      '    of which the alert rules alone (minus both ingests)',
      `${Math.max(0, withAlerts - scrapeIngest - obsIngest).toFixed(0)} µs per round`,
    );
  line(
    '  (CPU of this process per replayed round, quickest of the passes, GC included; a round = 1 s live)',
    '',
  );
}

if (require.main === module) void runCoreCpuStagesBench().then(() => process.exit(0));
