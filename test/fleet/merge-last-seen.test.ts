// A fleet host that cannot be read: its workers' merged readings say "unreachable" where state and
// scrape would be, and what the host last saw of them, with when — so a card can say "last seen healthy at …"
// instead of either the old "healthy" or a bare failure.
import { expect, it } from 'vitest';
import type { DeploymentConfig, Observation, ServiceObservation } from '../../src/shared/domain';
import { mergeFleetObservation } from '../../src/main/core/deployment/merge-observations';

const DEPLOYMENT: DeploymentConfig = {
  id: 'fleet',
  name: 'fleet',
  services: [
    { role: 'decode', id: 'decode-0', hostId: 'gpu-a', unit: 'd0.service', apiUrl: 'http://a:30200' },
    { role: 'decode', id: 'decode-1', hostId: 'gpu-b', unit: 'd1.service', apiUrl: 'http://b:30200' },
  ],
};

function read(id: string, unit: string, checkedAt: number): ServiceObservation {
  return {
    role: 'decode',
    id,
    unit,
    systemd: {
      unit,
      loadState: 'loaded',
      activeState: 'active',
      subState: 'running',
      mainPid: 42,
      nRestarts: 0,
      activeEnterTimestamp: 1,
      result: 'success',
    },
    health: { ok: true, detail: '200 OK', checkedAt },
  };
}

const obs = (hostId: string, ts: number, services: ServiceObservation[]): Observation => ({
  deploymentId: 'fleet',
  hostId,
  ts,
  services,
});

it("an unreachable host's worker carries its host's last reading of it, and when", () => {
  const merged = mergeFleetObservation({
    deployment: DEPLOYMENT,
    origin: 'gpu-a',
    ts: 5_000,
    latest: new Map([
      ['gpu-a', obs('gpu-a', 5_000, [read('decode-0', 'd0.service', 4_900)])],
      ['gpu-b', obs('gpu-b', 1_400, [read('decode-1', 'd1.service', 1_300)])],
    ]),
    unreachable: (h) => (h === 'gpu-b' ? 'connection timed out' : null),
  });
  const [a, b] = merged.services;
  expect(a.lastSeen).toBeUndefined();
  expect(b.systemd).toBeUndefined();
  expect(b.systemdError).toBe('unreachable: connection timed out');
  expect(b.lastSeen).toMatchObject({
    ts: 1_400,
    systemd: { activeState: 'active' },
    health: { ok: true, checkedAt: 1_300 },
  });
});

it('a host reading that could not read the unit either passes on the reading before it', () => {
  const earlier = { ts: 900, systemd: read('decode-1', 'd1.service', 800).systemd! };
  const blind: ServiceObservation = {
    role: 'decode',
    id: 'decode-1',
    unit: 'd1.service',
    systemdError: 'systemctl show on gpu-b has not answered for 3.1 s',
    lastSeen: earlier,
  };
  for (const unreachable of [() => null, (h: string) => (h === 'gpu-b' ? 'keepalive' : null)]) {
    const merged = mergeFleetObservation({
      deployment: DEPLOYMENT,
      origin: 'gpu-a',
      ts: 5_000,
      latest: new Map([
        ['gpu-a', obs('gpu-a', 5_000, [read('decode-0', 'd0.service', 4_900)])],
        ['gpu-b', obs('gpu-b', 4_000, [blind])],
      ]),
      unreachable,
    });
    expect(merged.services[1].lastSeen).toEqual(earlier);
  }
});
