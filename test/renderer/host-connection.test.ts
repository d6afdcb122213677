// A fleet's link states as pushed per host: each host's own entry changes, the deployment's link is its origin's.
// Every host's push used to overwrite the deployment's link (gpu-b silent read as "the host is not connected"
// over a fleet whose origin answered) while the host list kept the states of the moment it opened.
import { expect, it } from 'vitest';
import { withHostConnection } from '../../src/renderer/src/state/host-connection';
import type { ConnectionStatus, DeploymentSummary, HostConfig } from '../../src/shared/domain';

const host = (id: string): HostConfig => ({ id, label: id, kind: 'demo' });
const up: ConnectionStatus = { state: 'connected', since: 1 };
const stale: ConnectionStatus = { state: 'stale', since: 5, reason: 'no command or scrape answered' };

const fleet = (): { summary: DeploymentSummary; connection: ConnectionStatus } => {
  const summary: DeploymentSummary = {
    deployment: { id: 'f', name: 'f', services: [] },
    host: host('gpu-a'),
    connection: up,
    hosts: ['gpu-a', 'gpu-b'].map((id) => ({ host: host(id), connection: up })),
  };
  return { summary, connection: up };
};

it("a fleet host's push changes that host's link only; the origin's is the deployment's", () => {
  const b = withHostConnection(fleet(), 'gpu-b', stale);
  expect(b.connection).toEqual(up);
  expect(b.summary.hosts!.map((h) => h.connection.state)).toEqual(['connected', 'stale']);
  const a = withHostConnection(b, 'gpu-a', stale);
  expect(a.connection).toEqual(stale);
  expect(a.summary.connection).toEqual(stale);
  expect(a.summary.hosts!.map((h) => h.connection.state)).toEqual(['stale', 'stale']);
});

it('a host the fleet does not have changes nothing; a one-host deployment takes every push', () => {
  const f = fleet();
  expect(withHostConnection(f, 'gpu-z', stale)).toBe(f);
  const one = { summary: { ...f.summary, hosts: undefined }, connection: up };
  expect(withHostConnection(one, 'demo', stale).connection).toEqual(stale);
});
