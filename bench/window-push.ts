// What a listening window's 'dashboard' push costs the core per round, on rounds captured from the real core:
// the whole snapshot serialised as the WebSocket bridge sends it (every push before DashboardChanges) beside
// the push of changes computed (services/dashboard-push.ts) and serialised, interleaved over the same rounds
// so the machine's load falls on both alike; for the one-host demo and the 8-host, 32-worker fleet
// (fleet-scale's, in a child process). CPU µs per round min / median / max over the passes, and kB per round.
//   npm run bench -- window-push      (BENCH_WINDOW_PUSH_ROUNDS=30 rounds captured, BENCH_WINDOW_PUSH_PASSES=60)
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp } from '../src/main/compose';
import type { DashboardPush, DashboardSnapshot } from '../src/shared/contract';
import { dashboardPush } from '../src/main/core/services/dashboard-push';
import { remoteFleet, SCALE } from './fleet-core';

const ROUNDS = Number(process.env.BENCH_WINDOW_PUSH_ROUNDS ?? 30);
const PASSES = Number(process.env.BENCH_WINDOW_PUSH_PASSES ?? 60);
/** The deployment opening (first scrapes, series first seen) is left out of the captured rounds. */
const SETTLE_MS = 12_000;

/** Each round's whole snapshot, as getDashboard answers it right after the round's observation. */
async function capture(fleet: boolean): Promise<DashboardSnapshot[]> {
  const f = fleet ? await remoteFleet(SCALE) : undefined;
  const dir = mkdtempSync(join(tmpdir(), 'pdc-window-push-'));
  const app = createApp({
    shell: 'browser',
    dataDir: dir,
    record: false,
    ...(f && { homeDir: f.ready.home }),
  });
  try {
    const entry = f?.ready.entry;
    const id = entry
      ? (await app.handlers.connectHost({ host: { id: entry, label: entry, kind: 'ssh', alias: entry } }))
          .deployment.id
      : (await app.core.openDemo({})).deployment.id;
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const snaps: DashboardSnapshot[] = [];
    await new Promise<void>((done) =>
      app.core.on('observation', (o) => {
        if (o.deploymentId !== id || snaps.length >= ROUNDS) return;
        void app.handlers.getDashboard({ deploymentId: id }).then((s) => {
          snaps.push(s);
          if (snaps.length === ROUNDS) done();
        });
      }),
    );
    return snaps;
  } finally {
    await app.shutdown();
    await f?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** CPU µs per round of one pass over the rounds, and the bytes it serialised. */
function pass(
  snaps: DashboardSnapshot[],
  push: (before: DashboardSnapshot | undefined, s: DashboardSnapshot) => DashboardPush,
): { us: number; bytes: number } {
  let bytes = 0;
  let before: DashboardSnapshot | undefined;
  const c = process.cpuUsage();
  for (const s of snaps) {
    bytes += JSON.stringify({ t: 'evt', event: 'dashboard', payload: push(before, s) }).length;
    before = s;
  }
  const d = process.cpuUsage(c);
  return { us: (d.user + d.system) / snaps.length, bytes: bytes / snaps.length };
}

function spread(x: number[]): string {
  const v = [...x].sort((a, b) => a - b);
  return `${v[0].toFixed(0)} / ${v[v.length >> 1].toFixed(0)} / ${v[v.length - 1].toFixed(0)}`;
}

export async function runWindowPushBench(): Promise<void> {
  for (const fleet of [false, true]) {
    const snaps = await capture(fleet);
    const whole = { us: [] as number[], bytes: 0 };
    const changes = { us: [] as number[], bytes: 0 };
    const diff: number[] = [];
    for (let i = 0; i < PASSES; i++) {
      const a = pass(snaps, (_, s) => s);
      const b = pass(snaps, dashboardPush);
      whole.us.push(a.us);
      whole.bytes = a.bytes;
      changes.us.push(b.us);
      changes.bytes = b.bytes;
      // The changes alone, without serialising them.
      const c = process.cpuUsage();
      let before: DashboardSnapshot | undefined;
      for (const s of snaps) {
        dashboardPush(before, s);
        before = s;
      }
      const d = process.cpuUsage(c);
      diff.push((d.user + d.system) / snaps.length);
    }
    const label = fleet
      ? `the fleet (${SCALE.hosts} hosts, ${SCALE.prefill + SCALE.decode} workers)`
      : 'one 1P1D host';
    console.log(
      `dashboard push per round, ${label}: CPU µs min / median / max over ${PASSES} passes of ${snaps.length} rounds; kB`,
    );
    console.log(
      `  whole snapshot serialised                    ${spread(whole.us).padEnd(18)} ${(whole.bytes / 1000).toFixed(1)} kB`,
    );
    console.log(
      `  changes computed and serialised              ${spread(changes.us).padEnd(18)} ${(changes.bytes / 1000).toFixed(1)} kB`,
    );
    console.log(`    of which computing the changes             ${spread(diff)}`);
  }
  console.log(
    `load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
}

if (require.main === module) void runWindowPushBench().then(() => process.exit(0));
