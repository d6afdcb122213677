// SSH channels a fleet holds on each host (issue 15 "Scale": ≤ 8 per host, none opened in steady state), counted
// by each demo host's own SSH server. Four workers per host, the router beside four of them on the first: every
// HTTP endpoint keeps exactly one forwarded channel however many requests a round makes of it (/metrics every
// round, /health every fifth, /server_info when the scrape lacks capacity), and a steady stretch of rounds, with
// the health checks in it, opens none. Besides its endpoints a host holds one persistent shell and one journal
// follow: the router's host, with its API and metrics ports beside four workers, holds exactly 8. A spare shell
// opens only for a read that waited behind a slow one (a loaded machine can make one slow), and then the link's
// budget takes back an idle tunnel for it: the bound holds either way.
import { expect, it } from 'vitest';
import type { Observation } from '../../src/shared/domain';
import { manualClock } from '../demo/helpers';
import { fleetApps } from '../support/fleet-app';

const openFleetApp = fleetApps('fleet-channels');

it('holds at most 8 channels per host: one per HTTP endpoint, one shell, one follow, none opened in steady rounds', async () => {
  // Recording on, as by default: its journal follow is one of each host's channels.
  const { fleet, app } = await openFleetApp({
    fleet: {
      clock: manualClock(),
      seed: 7,
      historyMs: 5 * 60_000,
      shape: { hosts: 2, prefill: 2, decode: 6 },
    },
    app: { intervalMs: 250 },
  });
  await app.handlers.connectHost({ host: { id: 'gpu-a', label: 'gpu-a', kind: 'ssh', alias: 'gpu-a' } });

  const rounds = (n: number, what: string, ok: (o: Observation) => boolean = () => true): Promise<void> =>
    new Promise((resolve, reject) => {
      let seen = 0;
      const timer = setTimeout(() => {
        app.core.off('observation', on);
        reject(new Error(`${what}: ${seen} of ${n} rounds within 90 s`));
      }, 90_000);
      const on = (o: Observation): void => {
        if (!ok(o) || ++seen < n) return;
        clearTimeout(timer);
        app.core.off('observation', on);
        resolve();
      };
      app.core.on('observation', on);
    });
  await rounds(1, 'every worker read', (o) => o.services.filter((s) => s.kv).length === 8);
  // Past the first health checks, GPU reads and the journal follow's start.
  await rounds(12, 'warm-up');
  for (const h of fleet.hosts) h.channels.resetOpenMax();
  const tcpip0 = fleet.hosts.map((h) => h.channels.tcpipChannels);
  const exec0 = fleet.hosts.map((h) => h.channels.execsSince().length);
  // A scrape that timed out (a loaded machine) loses its channel, and the endpoint's next request opens one.
  const failedScrapes = new Map<string, number>();
  const countFailures = (o: Observation): void => {
    for (const s of o.services)
      if (s.hostId && ((s.metrics && !s.metrics.ok) || (s.health && !s.health.ok)))
        failedScrapes.set(s.hostId, (failedScrapes.get(s.hostId) ?? 0) + 1);
  };
  app.core.on('observation', countFailures);
  await rounds(15, 'steady window');
  app.core.off('observation', countFailures);

  for (const [i, h] of fleet.hosts.entries()) {
    const kinds = h.channels.openKinds;
    const execs = h.channels.execsSince().slice(exec0[i]);
    const spares = execs.filter((e) => e.command === 'sh').length;
    expect(
      execs.filter((e) => e.command !== 'sh').map((e) => e.command),
      `${h.name}: exec channels opened`,
    ).toEqual([]);
    // A tunnel is only ever closed to make room for a spare shell, and reopened after it.
    const failed = failedScrapes.get(h.name) ?? 0;
    expect(
      h.channels.tcpipChannels - tcpip0[i],
      `${h.name}: tunnels opened in steady state (${spares} spare shells, ${failed} failed scrapes)`,
    ).toBeLessThanOrEqual(2 * spares + failed);
    expect(
      h.channels.openChannels.max,
      `${h.name}: open at once (${JSON.stringify(kinds)})`,
    ).toBeLessThanOrEqual(8);
    if (spares > 0 || failed > 0) continue;
    const http = Object.entries(kinds).filter(([k]) => k.startsWith('tcpip '));
    expect(http.length, `${h.name}: HTTP endpoints with a channel (${JSON.stringify(kinds)})`).toBe(
      h.name === 'gpu-a' ? 6 : 4,
    );
    for (const [kind, n] of http) expect(n, `${h.name} ${kind}`).toBe(1);
    const sessions = Object.entries(kinds).filter(([k]) => k.startsWith('exec '));
    expect(sessions, `${h.name}: one shell and one follow`).toHaveLength(2);
    expect(
      sessions.reduce((a, [, n]) => a + n, 0),
      `${h.name}: one shell and one follow (${JSON.stringify(kinds)})`,
    ).toBe(2);
    expect(h.channels.openChannels.max, h.name).toBe(http.length + 2);
  }
}, 180_000);
