// A fleet worker's journal: `followJournal` by worker id follows every unit of that worker on its own host —
// decode-2 spans gpu-b (node rank 0) and gpu-c (node rank 1) in the demo fleet — each line labelled with the
// host it was read on and the node rank, in time order; the role form keeps working; an unknown worker is
// refused with the ones there are.
import { expect, it } from 'vitest';
import type { App } from '../../src/main/compose';
import type { DemoFleet } from '../../src/main/demo/fleet';
import { manualClock } from '../demo/helpers';
import { fleetApps } from '../support/fleet-app';

const openFleetApp = fleetApps('worker-journal');

async function setup(): Promise<{ app: App; fleet: DemoFleet; id: string }> {
  const { fleet, app } = await openFleetApp({
    fleet: { clock: manualClock(), seed: 5, historyMs: 10 * 60_000 },
    app: { intervalMs: 300, record: false },
  });
  const s = await app.handlers.connectHost({
    host: { id: 'gpu-a', label: 'gpu-a', kind: 'ssh', alias: 'gpu-a' },
  });
  return { app, fleet, id: s.deployment.id };
}

it('follows every unit of a multi-node worker on its own host, lines labelled by host and node rank', async () => {
  const { app, fleet, id } = await setup();
  const r = await app.handlers.followJournal({
    deploymentId: id,
    role: 'decode',
    worker: 'decode-2',
    lines: 20,
  });
  expect(r.unit).toBe('gpu-b/sglang-decode-2.service gpu-c/sglang-decode-2.service');
  expect(r.command.split('\n').map((l) => l.split(':')[0])).toEqual(['gpu-b', 'gpu-c']);
  const byHost = (h: string) => r.lines.filter((l) => l.host === h);
  expect(byHost('gpu-b').length).toBeGreaterThan(0);
  expect(byHost('gpu-c').length).toBeGreaterThan(0);
  expect(new Set(byHost('gpu-b').map((l) => l.nodeRank))).toEqual(new Set([0]));
  expect(new Set(byHost('gpu-c').map((l) => l.nodeRank))).toEqual(new Set([1]));
  expect(r.lines.every((l) => l.host === 'gpu-b' || l.host === 'gpu-c')).toBe(true);
  expect(r.lines.map((l) => l.ts)).toEqual([...r.lines.map((l) => l.ts)].sort((a, b) => a - b));
  // Each host's journal was read through that host's own link.
  const journalOn = (h: string) =>
    fleet
      .host(h)
      .channels.execsSince()
      .concat(fleet.host(h).channels.stdinLinesSince())
      .some((e) => e.command.includes('journalctl') && e.command.includes('sglang-decode-2.service'));
  expect(journalOn('gpu-b')).toBe(true);
  expect(journalOn('gpu-c')).toBe(true);
  await app.handlers.unfollowJournal({ followId: r.followId });
}, 60_000);

it('a one-node worker is its one unit on its host; the role form still follows the role', async () => {
  const { app, id } = await setup();
  const w = await app.handlers.followJournal({
    deploymentId: id,
    role: 'prefill',
    worker: 'prefill-1',
    lines: 50,
  });
  expect(w.unit).toBe('gpu-a/sglang-prefill-1.service');
  expect(w.lines.length).toBeGreaterThan(0);
  expect(w.lines.every((l) => l.host === 'gpu-a' && l.nodeRank === undefined)).toBe(true);
  const byRole = await app.handlers.followJournal({ deploymentId: id, role: 'prefill', lines: 50 });
  expect(byRole.unit).toBe('sglang-prefill-0.service');
  await expect(
    app.handlers.followJournal({ deploymentId: id, role: 'decode', worker: 'decode-9' }),
  ).rejects.toThrow(/has no worker or router "decode-9"/);
}, 60_000);

it("the journal around a moment is read on each unit's own host: a worker's nodes, a role's workers", async () => {
  const { app, fleet, id } = await setup();
  const f = await app.handlers.followJournal({
    deploymentId: id,
    role: 'decode',
    worker: 'decode-2',
    lines: 5,
  });
  await app.handlers.unfollowJournal({ followId: f.followId });
  const ts = f.lines.at(-1)!.ts;
  const w = await app.handlers.journalAround({ deploymentId: id, ts, spanMs: 600_000, worker: 'decode-2' });
  expect(w.command.split('\n').map((l) => l.split(':')[0])).toEqual(['gpu-b', 'gpu-c']);
  expect(new Set(w.lines.map((l) => l.unit))).toEqual(new Set(['sglang-decode-2.service']));
  const nodes = new Set(w.lines.map((l) => `${l.host}#${l.nodeRank}`));
  expect(nodes).toEqual(new Set(['gpu-b#0', 'gpu-c#1']));
  expect(w.lines.map((l) => l.ts)).toEqual([...w.lines.map((l) => l.ts)].sort((a, b) => a - b));
  // The role: all three decode workers, on gpu-b and gpu-c — none of them runs on gpu-a, the origin.
  const role = await app.handlers.journalAround({ deploymentId: id, ts, spanMs: 600_000, role: 'decode' });
  const units = new Set(role.lines.map((l) => `${l.host}/${l.unit}`));
  for (const u of [
    'gpu-b/sglang-decode-0.service',
    'gpu-b/sglang-decode-1.service',
    'gpu-c/sglang-decode-2.service',
  ])
    expect(units, [...units].join(', ')).toContain(u);
  expect(role.lines.some((l) => l.host === 'gpu-a')).toBe(false);
  const windowOn = (h: string) =>
    fleet
      .host(h)
      .channels.execsSince()
      .some((e) => e.command.includes('journalctl') && e.command.includes('--since'));
  expect(windowOn('gpu-c')).toBe(true);
  await expect(
    app.handlers.journalAround({ deploymentId: id, ts, worker: 'decode-9' }),
  ).rejects.toMatchObject({ code: 'unknown-worker' });
}, 60_000);
