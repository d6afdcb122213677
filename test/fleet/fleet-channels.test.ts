// SSH channels a fleet holds on each host (issue 15 "Scale": ≤ 8 per host, none opened in steady state), counted
// by each demo host's own SSH server. Four workers per host, the router beside four of them on the first: every
// HTTP endpoint keeps exactly one forwarded channel however many requests a round makes of it (/metrics every
// round, /health every fifth, /server_info when the scrape lacks capacity), and a steady stretch of rounds, with
// the health checks in it, opens none. Besides its endpoints a host holds its persistent shells (two at most) and
// one journal follow: a worker host with four servers stays within 8; the router's host, with its API and
// metrics ports beside four workers, holds 9.
import { expect, it } from 'vitest';
import type { Observation } from '../../src/shared/domain';
import { manualClock } from '../demo/helpers';
import { fleetApps } from '../support/fleet-app';

const openFleetApp = fleetApps('fleet-channels');

it('keeps one channel per HTTP endpoint and opens none in steady rounds', async () => {
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
  await rounds(15, 'steady window');

  for (const [i, h] of fleet.hosts.entries()) {
    const kinds = h.channels.openKinds;
    const http = Object.entries(kinds).filter(([k]) => k.startsWith('tcpip '));
    expect(http.length, `${h.name}: HTTP endpoints with a channel (${JSON.stringify(kinds)})`).toBe(
      h.name === 'gpu-a' ? 6 : 4,
    );
    for (const [kind, n] of http) expect(n, `${h.name} ${kind}`).toBe(1);
    expect(h.channels.tcpipChannels - tcpip0[i], `${h.name}: tunnels opened in steady state`).toBe(0);
    expect(h.channels.execsSince().length - exec0[i], `${h.name}: exec channels opened`).toBe(0);
    const sessions = Object.entries(kinds).filter(([k]) => k.startsWith('exec '));
    expect(
      sessions.reduce((a, [, n]) => a + n, 0),
      `${h.name}: shells and follows`,
    ).toBeLessThanOrEqual(3);
    expect(
      h.channels.openChannels.max,
      `${h.name}: open at once (${JSON.stringify(kinds)})`,
    ).toBeLessThanOrEqual(http.length + 3);
    if (h.name !== 'gpu-a') expect(h.channels.openChannels.max, h.name).toBeLessThanOrEqual(8);
  }
}, 180_000);
