// connectHost on the host a fleet's router runs on opens the whole fleet, found the way a real one is: through
// the operator's ssh config (the demo fleet writes one), the router's list, and each worker's host reached by
// the alias whose HostName is the worker URL's address. A host with no alias leaves its workers unplaced, said
// with the line to add; what can be placed is watched all the same.
import { expect, it } from 'vitest';
import type { App } from '../../src/main/compose';
import type { DemoFleet } from '../../src/main/demo/fleet';
import type { HostConfig, Observation } from '../../src/shared/domain';
import { dashboardSchemas } from '../../src/shared/schemas/dashboard';
import { manualClock } from '../demo/helpers';
import { fleetApps } from '../support/fleet-app';

const openFleetApp = fleetApps('connect-fleet');

async function setup(omit: Array<'gpu-b' | 'gpu-c'> = []): Promise<{ app: App; fleet: DemoFleet }> {
  const { fleet, app } = await openFleetApp({
    fleet: { clock: manualClock(), seed: 5, historyMs: 10 * 60_000 },
    app: { intervalMs: 300, record: false },
    omit,
  });
  return { app, fleet };
}

const gpuA: HostConfig = { id: 'gpu-a', label: 'gpu-a', kind: 'ssh', alias: 'gpu-a' };

function nextObservation(app: App, ok: (o: Observation) => boolean): Promise<Observation> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no matching observation within 15 s')), 15_000);
    const on = (o: Observation): void => {
      if (!ok(o)) return;
      clearTimeout(timer);
      app.core.off('observation', on);
      resolve(o);
    };
    app.core.on('observation', on);
  });
}

it('opens the fleet from its router host: every worker on its own host, one link per host', async () => {
  const { app, fleet } = await setup();
  const s = await app.handlers.connectHost({ host: gpuA });
  expect(s.deployment.id).toBe('gpu-a');
  expect(s.deployment.services.map((x) => `${x.id}@${x.hostId}`)).toEqual([
    'router@gpu-a',
    'prefill-0@gpu-a',
    'prefill-1@gpu-a',
    'decode-0@gpu-b',
    'decode-1@gpu-b',
    'decode-2@gpu-b',
  ]);
  expect(s.hosts?.map((h) => h.host.id)).toEqual(['gpu-a', 'gpu-b', 'gpu-c']);
  for (const h of fleet.hosts) expect(h.channels.connections, h.name).toBe(1);
  const o = await nextObservation(app, (x) => x.services.filter((y) => y.kv).length === 5);
  for (const w of fleet.groundTruth().workers)
    expect(o.services.find((x) => x.id === w.name)?.kv?.usedTokens, w.name).toBe(w.kv?.usedTokens);
}, 60_000);

it('lists the workers of a host no ssh alias names as unplaced, with the line to add, and watches the rest', async () => {
  const { app } = await setup(['gpu-b']);
  const s = await app.handlers.connectHost({ host: gpuA });
  expect(s.deployment.services.map((x) => x.id)).toEqual(['router', 'prefill-0', 'prefill-1']);
  expect(s.fleet?.unplaced.map((u) => u.url)).toEqual([
    'http://127.0.0.3:30200',
    'http://127.0.0.3:30201',
    'http://127.0.0.3:30202',
  ]);
  for (const u of s.fleet?.unplaced ?? []) {
    expect(u.reason).toContain('no ssh alias resolves to 127.0.0.3');
    expect(u.fix).toContain('HostName 127.0.0.3');
  }
  const events = await app.handlers.listEvents({ deploymentId: s.deployment.id });
  expect(events.filter((e) => e.title.startsWith('unplaced: ')).map((e) => e.detail)).toEqual(
    s.fleet?.unplaced.map((u) => u.fix),
  );
  const o = await nextObservation(app, (x) => x.services.filter((y) => y.kv).length === 2);
  expect(o.services.map((x) => x.id)).toEqual(['router', 'prefill-0', 'prefill-1']);
}, 60_000);

it('hosts added by hand (--add-host) are scanned when the fleet opens, and one link per host still', async () => {
  const { app, fleet } = await setup();
  const gpuC: HostConfig = { id: 'gpu-c', label: 'gpu-c', kind: 'ssh', alias: 'gpu-c' };
  const s = await app.core.connectHost({ host: gpuA }, { addHosts: [gpuC] });
  // Without the hand-added host gpu-c is found as decode-2's peer; added, it is the operator's.
  expect(s.fleet?.hosts.map((h) => [h.id, h.via])).toEqual([
    ['gpu-a', 'origin'],
    ['gpu-b', 'alias'],
    ['gpu-c', 'added'],
  ]);
  const d2 = s.deployment.services.find((x) => x.id === 'decode-2');
  expect(d2?.units?.map((u) => `${u.hostId}#${u.nodeRank}`)).toEqual(['gpu-b#0', 'gpu-c#1']);
  for (const h of fleet.hosts) expect(h.channels.connections, h.name).toBe(1);
}, 60_000);

it("discover on a fleet reads every host over its own link: each host's units in its own report", async () => {
  const { app, fleet } = await setup();
  const s = await app.handlers.connectHost({ host: gpuA });
  const since = Date.now();
  const r = await app.handlers.discover({ deploymentId: s.deployment.id });
  expect(r.hostId).toBe('gpu-a');
  expect(r.hosts?.map((h) => h.hostId)).toEqual(['gpu-a', 'gpu-b', 'gpu-c']);
  const units = (h: string) =>
    r
      .hosts!.find((x) => x.hostId === h)!
      .found.filter((f) => f.unit.startsWith('sglang-'))
      .map((f) => f.unit)
      .sort();
  expect(units('gpu-a')).toEqual([
    'sglang-prefill-0.service',
    'sglang-prefill-1.service',
    'sglang-router.service',
  ]);
  expect(units('gpu-b')).toEqual([
    'sglang-decode-0.service',
    'sglang-decode-1.service',
    'sglang-decode-2.service',
  ]);
  expect(units('gpu-c')).toEqual(['sglang-decode-2.service']);
  const asked = (h: string) =>
    fleet
      .host(h)
      .channels.execsSince(since)
      .concat(fleet.host(h).channels.stdinLinesSince(since))
      .some((e) => e.command.includes('systemctl') && e.command.includes('ExecStart'));
  for (const h of ['gpu-a', 'gpu-b', 'gpu-c']) expect(asked(h), h).toBe(true);
}, 60_000);

it('accepts scoped series keys over the transport and refuses a misspelt one by name', () => {
  const ok = dashboardSchemas.getSeries.safeParse({
    deploymentId: 'gpu-a',
    keys: ['decode.kv_ratio@decode-1', 'gpu.3.util@gpu-b', 'decode.kv_ratio'],
    maxPoints: 100,
  });
  expect(ok.success).toBe(true);
  const bad = dashboardSchemas.getSeries.safeParse({
    deploymentId: 'gpu-a',
    keys: ['decode.kv_ratoi@decode-1'],
    maxPoints: 100,
  });
  expect(bad.success).toBe(false);
  expect(bad.error?.issues[0].message).toContain('"decode.kv_ratoi@decode-1" is not a signal key');
});
