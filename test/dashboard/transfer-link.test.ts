// The prefill → decode link: its figures are the last ones, and say why, when no worker of one side serves.
// Before, a demo fleet with every decode worker down read a steady 19 GB/s: prefill's gauge keeps its last value.
import { describe, expect, it } from 'vitest';
import { transferFigures } from '../../src/renderer/src/components/transfer-link';
import type { Observation, ServiceObservation } from '../../src/shared/domain';
import type { SignalKey } from '../../src/shared/signals/spec';

const VALUES: Partial<Record<SignalKey, number>> = {
  'prefill.kv_transfer_gb_s': 19,
  'prefill.kv_transfer_latency_p50_ms': 42,
  'decode.transfer_failed_per_min': 2,
};
const value = (k: SignalKey): number | null => VALUES[k] ?? null;

const worker = (
  role: 'prefill' | 'decode',
  id: string,
  activeState: string,
  healthOk?: boolean,
): ServiceObservation => ({
  role,
  id,
  unit: `sglang-${id}.service`,
  systemd: {
    unit: `sglang-${id}.service`,
    loadState: 'loaded',
    activeState,
    subState: activeState === 'active' ? 'running' : 'auto-restart',
    mainPid: 1,
    nRestarts: 0,
    activeEnterTimestamp: null,
    result: 'success',
  },
  ...(healthOk === undefined
    ? {}
    : { health: { ok: healthOk, detail: healthOk ? '200 OK' : 'connection refused', checkedAt: 0 } }),
});
const observed = (...services: ServiceObservation[]): Observation => ({
  deploymentId: 'd',
  hostId: 'h',
  ts: 0,
  services,
});

describe('transferFigures', () => {
  it('gives the figures as they are while a worker of each side serves', () => {
    const f = transferFigures(
      value,
      observed(
        worker('prefill', 'p0', 'active', true),
        worker('decode', 'd0', 'failed'),
        worker('decode', 'd1', 'active'),
      ),
    );
    expect(f).toEqual({ gbPerS: 19, latencyMs: 42, failuresPerMin: 2, notServing: [], unknown: [] });
  });

  it('names the side with no worker serving: stopped, crash-looping or failing its health check', () => {
    const down = observed(
      worker('prefill', 'p0', 'active', true),
      worker('decode', 'd0', 'activating'),
      worker('decode', 'd1', 'active', false),
    );
    expect(transferFigures(value, down).notServing).toEqual(['decode']);
    const both = observed(worker('prefill', 'p0', 'inactive'), worker('decode', 'd0', 'failed'));
    expect(transferFigures(value, both).notServing).toEqual(['prefill', 'decode']);
  });

  it('a side that cannot be read now is unknown since its last reading, not "not serving"', () => {
    const blind = (id: string, lastSeenAt?: number): ServiceObservation => ({
      role: 'decode',
      id,
      unit: `sglang-${id}.service`,
      systemdError: 'no connection to gpu-b',
      ...(lastSeenAt !== undefined
        ? { lastSeen: { ts: lastSeenAt, systemd: worker('decode', id, 'active').systemd! } }
        : {}),
    });
    const f = transferFigures(
      value,
      observed(worker('prefill', 'p0', 'active', true), blind('d0', 500), blind('d1', 700)),
    );
    expect(f.notServing).toEqual([]);
    expect(f.unknown).toEqual([{ role: 'decode', since: 700 }]);
    // One worker read and down, the other unreadable: whether decode serves is still unknown.
    const mixed = observed(worker('decode', 'd0', 'failed'), blind('d1'));
    expect(transferFigures(value, mixed)).toMatchObject({
      notServing: [],
      unknown: [{ role: 'decode', since: null }],
    });
    // One worker serving settles it, whatever the others.
    expect(
      transferFigures(value, observed(worker('decode', 'd0', 'active'), blind('d1', 5))).unknown,
    ).toEqual([]);
  });

  it('says nothing before the first poll, or of a role the deployment does not have', () => {
    expect(transferFigures(value).notServing).toEqual([]);
    const first: ServiceObservation = { role: 'decode', id: 'd0', unit: 'sglang-d0.service' };
    expect(transferFigures(value, observed(first))).toMatchObject({ notServing: [], unknown: [] });
    expect(transferFigures(value, observed(worker('decode', 'd0', 'active'))).notServing).toEqual([]);
  });
});
