// The demo fleet through the app's own SSH stack: the config writeSshConfig leaves is what the console's
// resolver reads (PD_CONSOLE_SSH_HOME / homeDir), and `pd-console status` on gpu-a reports KV equal to the
// simulation's ground truth. The fleet's clock stands still, so the figures cannot move between the two.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createApp, type App } from '../../src/main/compose';
import { startDemoFleet, type DemoFleet } from '../../src/main/demo/fleet';
import { cliOnApp } from '../cli/run-on-app';
import { manualClock } from './helpers';

let fleet: DemoFleet;
let app: App;
let dir: string;

beforeAll(async () => {
  fleet = await startDemoFleet({ clock: manualClock(), seed: 11, historyMs: 10 * 60_000 });
  dir = mkdtempSync(join(tmpdir(), 'pd-fleet-app-'));
  const files = await fleet.writeSshConfig(join(dir, 'home'));
  app = createApp({
    shell: 'cli',
    intervalMs: 500,
    dataDir: join(dir, 'data'),
    record: false,
    homeDir: files.home,
  });
}, 60_000);

afterAll(async () => {
  await app?.shutdown();
  await fleet?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it('pd-console status --host gpu-a connects through the written config; its KV is the ground truth', async () => {
  const r = await cliOnApp(app, ['status', '--host', 'gpu-a', '--json', '--wait', '1']);
  expect(r.err).toBe('');
  const j = JSON.parse(r.out) as {
    connection: string;
    services: Array<{ role: string; unit: string; kv?: { usedTokens: number; capacityTokens: number } }>;
  };
  expect(j.connection).toBe('connected');
  const truth = fleet.groundTruth().workers;
  const prefills = j.services.filter((s) => s.role === 'prefill');
  expect(prefills.length).toBeGreaterThan(0);
  for (const s of prefills) {
    const w = truth.find(
      (t) => t.role === 'prefill' && t.units[0].unit === s.unit && t.units[0].host === 'gpu-a',
    );
    expect(w, s.unit).toBeDefined();
    expect(s.kv).toMatchObject({ usedTokens: w?.kv?.usedTokens, capacityTokens: w?.kv?.capacityTokens });
  }
}, 60_000);
