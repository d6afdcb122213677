// A fleet emits one observation per interval, on a grid (issue 15 "Scale": the scale bench saw 1.1–1.35 rounds
// a second under load). Each host's monitor used to run its own timer and a round was emitted when every host had
// answered or one interval after the first did: a host slower than the interval (here gpu-b, whose decode
// /metrics hangs so its polls wait out their budget) re-polled at once off the others' beat, its rounds came at its
// own times and, as polls spread under load, a timer's round and a completed one could follow each other closely.
// Now one round clock polls every host. Two hosts of the demo fleet over real SSH; the deployment's clock is a
// manual one, advanced in small steps while the real I/O runs between them.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { LiveDeployment } from '../../src/main/core/fleet/live-deployment';
import { SshConnection } from '../../src/main/core/ssh/connection';
import { startDemoFleet, type DemoFleet } from '../../src/main/demo/fleet';
import type { DeploymentConfig, HostConfig, Observation } from '../../src/shared/domain';
import type { Fleet } from '../../src/shared/fleet';
import { manualClock, type ManualClock } from '../demo/helpers';

let fleet: DemoFleet;
let live: LiveDeployment;
let clock: ManualClock;
const seen: Observation[] = [];

beforeAll(async () => {
  fleet = await startDemoFleet({ clock: manualClock(), seed: 3, historyMs: 5 * 60_000 });
  clock = manualClock();
  const hostConfig = (id: string): HostConfig => ({ id, label: id, kind: 'ssh', alias: id });
  const links = ['gpu-a', 'gpu-b'].map((name) => {
    const h = fleet.hosts.find((x) => x.name === name)!;
    const conn = new SshConnection({
      label: name,
      clock,
      configure: async () => ({
        host: h.address,
        port: h.port,
        username: fleet.username,
        privateKey: fleet.clientPrivateKey,
      }),
    });
    return { host: hostConfig(name), conn };
  });
  await Promise.all(links.map((l) => l.conn.start()));
  const service = (id: string, role: 'prefill' | 'decode', hostId: string, port: number) => ({
    id,
    role,
    hostId,
    unit: `sglang-${id}.service`,
    apiUrl: `http://127.0.0.1:${port}`,
    metricsUrl: `http://127.0.0.1:${port}/metrics`,
  });
  const config: DeploymentConfig = {
    id: 'rounds',
    name: 'rounds',
    services: [
      service('prefill-0', 'prefill', 'gpu-a', 30100),
      service('decode-0', 'decode', 'gpu-b', 30200),
    ],
  };
  const found: Fleet = { origin: 'gpu-a', hosts: [], routers: [], workers: [], unplaced: [], unrouted: [] };
  live = new LiveDeployment({ host: links[0].host, config, links, fleet: found, clock, intervalMs: 1000 });
  live.on('observation', (o) => seen.push(o));
  live.startMonitors();
}, 60_000);

afterAll(async () => {
  await live?.dispose();
  await fleet?.stop();
});

const realMs = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Advances the deployment's clock by `ms` in 100 ms steps, letting real I/O run between them. */
async function run(ms: number): Promise<void> {
  for (let t = 0; t < ms; t += 100) {
    clock.advance(100);
    await realMs(25);
  }
}

it('emits exactly one observation per interval while one host is slower than the interval', async () => {
  fleet.setFault('metrics-hang', true, 'decode-0');
  await run(5000);
  const from = seen.length;
  await run(30_000);
  const rounds = seen.slice(from);
  // A round's observation follows its tick once its polls have answered: one may fall either side of the window.
  expect(rounds.length).toBeGreaterThanOrEqual(29);
  expect(rounds.length).toBeLessThanOrEqual(31);
  // On the grid: each round one interval of the deployment's time after the one before, whichever host was late.
  expect(rounds.slice(1).map((o, i) => o.ts - rounds[i].ts)).toEqual(rounds.slice(1).map(() => 1000));
  // The slow host's worker says it is waiting; the other keeps reading.
  const last = rounds[rounds.length - 1];
  expect(last.services.find((s) => s.id === 'prefill-0')?.metrics?.ok).toBe(true);
  expect(last.services.find((s) => s.id === 'decode-0')?.metrics).toMatchObject({ ok: false });
}, 180_000);
