// The demo fleet at the scale benchmark's size, 8 hosts with 8 prefill and 24 decode workers on 127.0.0.2…9,
// opened by the app as an operator's fleet is (connectHost on the router's host through the written ssh
// config): every worker found on its host by the router's list, one SSH connection per host, and each
// worker's KV exactly the simulation's. The default 3-host fleet keeps its hand-laid layout (its own tests).
import { expect, it } from 'vitest';
import { startDemoFleet } from '../../src/main/demo/fleet';
import { fleetShapeProblem } from '../../src/main/demo/topology';
import type { Observation } from '../../src/shared/domain';
import { manualClock } from '../demo/helpers';
import { fleetApps } from '../support/fleet-app';

const openFleetApp = fleetApps('scaled-fleet');

it('opens 32 workers on 8 hosts with one connection per host, each worker at its true KV', async () => {
  const { fleet, app } = await openFleetApp({
    fleet: {
      clock: manualClock(),
      seed: 5,
      historyMs: 5 * 60_000,
      shape: { hosts: 8, prefill: 8, decode: 24 },
    },
    app: { intervalMs: 500, record: false },
  });
  expect(fleet.fallback).toBeNull();
  expect(fleet.hosts.map((h) => `${h.name} ${h.address}`)).toEqual(
    'abcdefgh'.split('').map((c, i) => `gpu-${c} 127.0.0.${2 + i}`),
  );
  const truth = fleet.groundTruth().workers;
  expect(truth.map((w) => w.name)).toEqual([
    ...Array.from({ length: 8 }, (_, n) => `prefill-${n}`),
    ...Array.from({ length: 24 }, (_, n) => `decode-${n}`),
  ]);
  // Four workers per host, two GPUs each, none shared.
  for (const h of fleet.hosts) {
    const gpus = truth.filter((w) => w.units[0].host === h.name).flatMap((w) => w.units[0].gpus);
    expect(gpus.sort(), h.name).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  }

  const s = await app.handlers.connectHost({
    host: { id: 'gpu-a', label: 'gpu-a', kind: 'ssh', alias: 'gpu-a' },
  });
  expect(s.fleet?.unplaced).toEqual([]);
  expect(s.deployment.services.filter((x) => x.role !== 'router').map((x) => `${x.id}@${x.hostId}`)).toEqual(
    truth.map((w) => `${w.name}@${w.units[0].host}`),
  );
  for (const h of fleet.hosts) expect(h.channels.connections, h.name).toBe(1);
  const o = await new Promise<Observation>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error('no observation with all 32 workers read within 60 s')),
      60_000,
    );
    const on = (x: Observation): void => {
      if (x.services.filter((y) => y.kv).length < 32) return;
      clearTimeout(timer);
      app.core.off('observation', on);
      resolve(x);
    };
    app.core.on('observation', on);
  });
  for (const w of fleet.groundTruth().workers)
    expect(o.services.find((x) => x.id === w.name)?.kv?.usedTokens, w.name).toBe(w.kv?.usedTokens);
}, 120_000);

it('refuses a fleet that does not fit its hosts, saying how many hosts would', async () => {
  expect(fleetShapeProblem({ hosts: 2, prefill: 8, decode: 24 })).toBe(
    '32 workers on 2 hosts is 16 on a host, but a host has 8 GPUs: use at least 4 hosts',
  );
  await expect(startDemoFleet({ shape: { hosts: 0, prefill: 1, decode: 1 } })).rejects.toThrow(
    'demo fleet: hosts 0: give a whole number from 1 to 26 (gpu-a … gpu-z)',
  );
});
