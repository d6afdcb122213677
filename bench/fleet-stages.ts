// The fleet's per-round work on the signal store, recorder and alerts side, stage by stage, on rounds it really saw: the demo
// fleet at the scale bench's size (8 hosts, 32 workers) runs in its own process, the core polls it for a while
// and keeps every scrape, merged observation and the signal store's latest values of each round; then each stage
// replays them in this process and prints its CPU and JS heap allocated per round (core-cpu-stages' measures:
// quickest of the passes, and V8's sampling heap profiler). Without SSH and the parse, so these figures hold
// still on a busy machine where fleet-scale's whole-process figure does not.
//   npm run bench -- fleet-stages      (BENCH_FLEET_STAGES_CAPTURE_MS=30000 how long rounds are captured;
//                                       BENCH_FLEET_STAGES_ROUNDS=file keeps the captured rounds there and
//                                       replays that file when it exists: two trees on the same rounds)
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deserialize, serialize } from 'node:v8';
import type { Observation } from '@shared/domain';
import { createApp } from '../src/main/compose';
import { evaluateAlerts, initialAlertState } from '../src/main/core/alerts/engine';
import { DEFAULT_ALERT_RULES } from '../src/main/core/alerts/rules';
import { OverviewTableBuilder } from '../src/main/core/review/overview-table';
import { DEFAULT_OVERVIEW_STEP_MS } from '../src/main/core/recording/overview-stream';
import type { StoredHeader } from '../src/main/core/recording/types';
import { workerTarget } from '../src/main/core/recording/fleet-targets';
import { MONITOR_TARGET, monitorExposition } from '../src/main/core/recording/host-series';
import { ScrapeEncoder } from '../src/main/core/recording/scrape-codec';
import { SignalsStore } from '../src/main/core/signals/signals-store';
import { allocated, time, type Round } from './core-cpu-stages';
import { remoteFleet, SCALE } from './fleet-core';

const CAPTURE_MS = Number(process.env.BENCH_FLEET_STAGES_CAPTURE_MS ?? 30_000);
const ROUNDS_FILE = process.env.BENCH_FLEET_STAGES_ROUNDS;

interface Captured {
  rounds: Round[];
  /** Each round's latest values (the alert rules' input), by its observation. */
  latest: Map<Observation, Record<string, number | null>>;
}

/** The rounds of ROUNDS_FILE when it exists; else captured now (and written there when it is set). */
async function loadRounds(): Promise<Captured> {
  if (ROUNDS_FILE && existsSync(ROUNDS_FILE)) {
    const saved = deserialize(readFileSync(ROUNDS_FILE)) as {
      rounds: Round[];
      latest: Record<string, number | null>[];
    };
    return { rounds: saved.rounds, latest: new Map(saved.rounds.map((r, i) => [r.obs, saved.latest[i]])) };
  }
  const captured = await capture();
  if (ROUNDS_FILE)
    writeFileSync(
      ROUNDS_FILE,
      serialize({ rounds: captured.rounds, latest: captured.rounds.map((r) => captured.latest.get(r.obs)) }),
    );
  return captured;
}

async function capture(): Promise<Captured> {
  const fleet = await remoteFleet(SCALE);
  const dir = mkdtempSync(join(tmpdir(), 'pdc-fleet-stages-'));
  const app = createApp({ shell: 'browser', dataDir: dir, homeDir: fleet.ready.home, record: false });
  const rounds: Round[] = [];
  const latest = new Map<Observation, Record<string, number | null>>();
  let pending: Round['scrapes'] = [];
  try {
    const alias = fleet.ready.entry;
    const s = await app.handlers.connectHost({ host: { id: alias, label: alias, kind: 'ssh', alias } });
    app.core.hooks.on('scrape', (e) => pending.push(e));
    app.core.hooks.on('observed', (obs) => {
      rounds.push({ scrapes: pending, obs });
      latest.set(obs, { ...app.dashboard.store.latest(obs.deploymentId) });
      pending = [];
    });
    await new Promise((r) => setTimeout(r, CAPTURE_MS));
    await app.core.closeDeployment({ deploymentId: s.deployment.id });
  } finally {
    await app.shutdown();
    await fleet.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  // The first rounds are the fleet opening (workers not all read yet, caches cold): not the steady state.
  return { rounds: rounds.slice(5), latest };
}

/** The observation as polled `shift` ms later: the round's ts and each service's own poll's. */
function shifted(obs: Observation, shift: number): Observation {
  return {
    ...obs,
    ts: obs.ts + shift,
    services: obs.services.map((s) =>
      s.polledAt === undefined ? s : { ...s, polledAt: s.polledAt + shift },
    ),
  };
}

export async function runFleetStagesBench(): Promise<void> {
  const { rounds, latest } = await loadRounds();
  const scrapes = rounds.reduce((n, r) => n + r.scrapes.length, 0);
  const line = (label: string, v: string): void => void process.stdout.write(`${label.padEnd(64)} ${v}\n`);
  line(
    `rounds captured from the demo fleet (${SCALE.hosts} hosts, ${SCALE.prefill}P${SCALE.decode}D, 1 Hz)`,
    `${rounds.length} (${(scrapes / rounds.length).toFixed(1)} scrapes per round)`,
  );
  const target = (s: Round['scrapes'][number]): string =>
    s.id === undefined ? s.role : workerTarget(s.role, s.id);
  const roles = [...new Set(rounds[0].obs.services.map((s) => s.role))];
  const stages: [string, () => (r: Round, shift: number) => void][] = [
    [
      "signal store: every worker's scrape, then the merged observation (role aggregates)",
      () => {
        const store = new SignalsStore();
        store.open(rounds[0].obs.deploymentId, roles);
        return (r, shift) => {
          for (const s of r.scrapes)
            store.ingest(r.obs.deploymentId, s.ts + shift, s.role, s.exposition, s.id);
          store.ingestObservation(shifted(r.obs, shift));
        };
      },
    ],
    [
      'recorder: encoding of the scrapes and the monitor row',
      () => {
        const enc = new ScrapeEncoder();
        return (r, shift) => {
          for (const s of r.scrapes) enc.encode(s.ts + shift, target(s), s.exposition);
          enc.encode(r.obs.ts + shift, MONITOR_TARGET, monitorExposition({ ...r.obs, ts: r.obs.ts + shift }));
        };
      },
    ],
    [
      'recorder: the overview table taking every scrape',
      () => {
        // Only take() (every 10 minutes, not replayed here) reads the header.
        const table = new OverviewTableBuilder({} as StoredHeader, DEFAULT_OVERVIEW_STEP_MS);
        return (r, shift) => {
          for (const s of r.scrapes) table.scrape(s.ts + shift, target(s), s.exposition);
        };
      },
    ],
    [
      'alert rules over the latest values (default rules)',
      () => {
        let state = initialAlertState();
        return (r, shift) => {
          state = evaluateAlerts(DEFAULT_ALERT_RULES, state, {
            ts: r.obs.ts + shift,
            roles,
            values: latest.get(r.obs)!,
          }).state;
        };
      },
    ],
  ];
  for (const [label, setup] of stages) {
    const { min, median } = time(rounds, setup);
    const bytes = await allocated(rounds, setup);
    line(
      `  ${label}`,
      `${min.toFixed(0)} µs per round (median pass ${median.toFixed(0)}), ${(bytes / 1024).toFixed(0)} kB allocated`,
    );
  }
  line(
    '  (CPU of this process per replayed round, quickest of the passes, GC included; a round = 1 s live;',
    '',
  );
  line('   the alert rules see the history of every pass before, ≈ 30 × the captured rounds by the end)', '');
}

if (require.main === module) void runFleetStagesBench().then(() => process.exit(0));
