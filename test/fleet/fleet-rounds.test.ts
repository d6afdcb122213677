// A fleet emits one observation per interval, on a grid (issue 15 "Scale": the scale bench saw 1.1–1.35 rounds
// a second under load). Each host's monitor used to run its own timer and a round was emitted when every host had
// answered or one interval after the first did: a host slower than the interval (here gpu-b, whose decode
// /metrics hangs so its polls wait out their budget) re-polled at once off the others' beat, its rounds came at its
// own times and, as polls spread under load, a timer's round and a completed one could follow each other closely.
// Now one round clock polls every host. Two hosts of the demo fleet over real SSH; the deployment's clock is a
// manual one, stepped a round at a time once the fast host's real I/O has answered, never while it runs; the slow
// host's polls are held for a set number of rounds, so how much it lags does not depend on the machine's load.
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { LiveDeployment } from '../../src/main/core/deployment/live-deployment';
import { DeploymentMonitor } from '../../src/main/core/monitor/deployment-monitor';
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
  vi.restoreAllMocks();
  await live?.dispose();
  await fleet?.stop();
});

/** Every host's poll as the round clock starts it, oldest first: the test steps the clock on their answers. */
const polls: { hostId: string; done: Promise<unknown> }[] = [];
/** gpu-b's polls held back until the test has stepped this many more rounds: a host slower than the interval. */
const SLOW_ROUNDS = 3;
const held: { rounds: number; release: () => void }[] = [];
const pollOnce = DeploymentMonitor.prototype.pollOnce;
vi.spyOn(DeploymentMonitor.prototype, 'pollOnce').mockImplementation(function (this: DeploymentMonitor) {
  const real = pollOnce.call(this);
  const done =
    this.hostId === 'gpu-b'
      ? new Promise<Observation>((resolve) =>
          held.push({ rounds: SLOW_ROUNDS, release: () => resolve(real) }),
        )
      : real;
  polls.push({ hostId: this.hostId, done });
  return done;
});

/** Settles once `p` has, or rejects naming `what` after `ms` of real time. */
function within<T>(p: Promise<T>, what: string, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/**
 * Steps the deployment's clock `n` rounds. Each step starts a round, waits for the fast host's poll of it to
 * answer (real SSH I/O, however long it takes) and lets the round's merge run; the slow host's poll is left
 * running across rounds. The clock never moves while the fast host's I/O is in flight.
 */
async function rounds(n: number): Promise<void> {
  // The round the monitors' start began.
  const first = polls.findLast((x) => x.hostId === 'gpu-a');
  if (first) await within(first.done, "gpu-a's poll of the round before", 20_000);
  for (let i = 0; i < n; i++) {
    for (const h of held.splice(0))
      if (--h.rounds > 0) held.push(h);
      else h.release();
    const from = polls.length;
    clock.advance(1000);
    const a = polls.slice(from).find((x) => x.hostId === 'gpu-a');
    if (!a) throw new Error(`round ${i + 1}: gpu-a was not polled (its previous poll had not answered)`);
    await within(a.done, `gpu-a's poll of round ${i + 1}`, 20_000);
    // The merge follows the poll's answer through a few promise reactions: let them all run.
    await new Promise((r) => setImmediate(r));
  }
}

it('emits exactly one observation per interval while one host is slower than the interval', async () => {
  fleet.setFault('metrics-hang', true, 'decode-0');
  await rounds(5);
  const from = seen.length;
  const firstPoll = polls.length;
  await rounds(30);
  // The 31st round's start closes the 30th, had the slow host kept it open; its own merge is still to come.
  clock.advance(1000);
  const window = seen.slice(from);
  expect(window).toHaveLength(30);
  // On the grid: each round one interval of the deployment's time after the one before, whichever host was late.
  expect(window.slice(1).map((o, i) => o.ts - window[i].ts)).toEqual(window.slice(1).map(() => 1000));
  // The slow host was polled only when its previous poll had answered, not on every round.
  const polled = (h: string): number => polls.slice(firstPoll).filter((p) => p.hostId === h).length;
  expect(polled('gpu-a')).toBe(31);
  expect(polled('gpu-b')).toBeLessThanOrEqual(Math.ceil(31 / SLOW_ROUNDS));
  expect(polled('gpu-b')).toBeGreaterThan(0);
  // The slow host's worker says it is waiting; the other keeps reading.
  const last = window[window.length - 1];
  expect(last.services.find((s) => s.id === 'prefill-0')?.metrics?.ok).toBe(true);
  expect(last.services.find((s) => s.id === 'decode-0')?.metrics).toMatchObject({ ok: false });
}, 180_000);
