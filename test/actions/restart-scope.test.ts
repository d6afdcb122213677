// Which deployments restart a role in place and which roll their workers: read from the services' shape, so a
// one-host 1P1D pair restarts in place whether or not its services carry ids (fleet discovery names them
// prefill-0, decode-0, router), and the in-place restart's plan is not refused for carrying them.
import { describe, expect, it } from 'vitest';
import type { DeploymentConfig, HostConfig, ServiceConfig } from '../../src/shared/domain';
import { hasWorkerGroups } from '../../src/shared/fleet';
import { standardDeployment } from '../../src/main/compose';
import { buildPlan } from '../../src/main/core/actions/plan';
import { defaultSettings } from '../../src/main/core/actions/restart-settings';

const host: HostConfig = { id: 'box', label: 'box', kind: 'ssh', alias: 'box' };
const pair = (): DeploymentConfig => ({ id: 'd', ...standardDeployment(host) });
const withIds = (d: DeploymentConfig): DeploymentConfig => ({
  ...d,
  services: d.services.map((s) => ({ ...s, id: s.role === 'router' ? 'router' : `${s.role}-0` })),
});

function planOf(d: DeploymentConfig) {
  return buildPlan({
    deployment: d,
    host,
    target: 'decode',
    drainRequested: false,
    settings: defaultSettings(),
    connected: true,
    connectionText: 'connected',
    identity: null,
    units: new Map(),
    scrapes: new Map(),
    drain: new Map(),
    now: 0,
  });
}

describe('restart scope', () => {
  it('a one-host pair restarts in place, with or without service ids', () => {
    expect(hasWorkerGroups(pair().services)).toBe(false);
    expect(hasWorkerGroups(withIds(pair()).services)).toBe(false);
  });

  it('a role with two workers, a second host or a multi-node worker rolls', () => {
    const d = withIds(pair());
    const decode = d.services.find((s) => s.role === 'decode')!;
    const second: ServiceConfig = { ...decode, id: 'decode-1', unit: 'sglang-decode-1.service' };
    expect(hasWorkerGroups([...d.services, second])).toBe(true);
    expect(hasWorkerGroups(d.services.map((s) => (s === decode ? { ...s, hostId: 'other' } : s)))).toBe(true);
    const multiNode = {
      ...decode,
      units: [
        { hostId: 'box', unit: decode.unit, nodeRank: 0 },
        { hostId: 'box', unit: 'sglang-decode-rank1.service', nodeRank: 1 },
      ],
    };
    expect(hasWorkerGroups(d.services.map((s) => (s === decode ? multiNode : s)))).toBe(true);
  });

  it("the in-place restart's plan of a pair whose services carry ids is not refused as a fleet", () => {
    expect(planOf(pair()).blockedReason).toBeUndefined();
    expect(planOf(withIds(pair())).blockedReason).toBeUndefined();
    const d = withIds(pair());
    const decode = d.services.find((s) => s.role === 'decode')!;
    const fleet = { ...d, services: [...d.services, { ...decode, id: 'decode-1', unit: 'u1.service' }] };
    expect(planOf(fleet).blockedReason).toMatch(/is a fleet/);
  });
});
