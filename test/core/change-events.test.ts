// Timeline events from consecutive observations: in a fleet each worker is compared with its own previous
// reading (not the first service of its role) and its events name the worker and host; a one-host pair keeps
// its role-named events.
import { expect, it } from 'vitest';
import type { Observation, ServiceObservation } from '../../src/shared/domain';
import { diffObservations } from '../../src/main/core/monitor/change-events';

function svc(
  id: string | undefined,
  role: 'prefill' | 'decode',
  unit: string,
  hostId: string | undefined,
  activeState: string,
  subState: string,
): ServiceObservation {
  return {
    role,
    ...(id ? { id } : {}),
    ...(hostId ? { hostId } : {}),
    unit,
    systemd: {
      unit,
      loadState: 'loaded',
      activeState,
      subState,
      mainPid: 1,
      nRestarts: 0,
      activeEnterTimestamp: null,
      result: 'success',
    },
  };
}

const obs = (ts: number, services: ServiceObservation[]): Observation => ({
  deploymentId: 'd',
  hostId: 'gpu-a',
  ts,
  services,
});

it('compares each fleet worker with its own previous reading and names it', () => {
  const before = obs(1, [
    svc('decode-0', 'decode', 'sglang-decode-0.service', 'gpu-b', 'active', 'running'),
    svc('decode-2', 'decode', 'sglang-decode-2.service', 'gpu-b', 'active', 'running'),
    svc('decode-2', 'decode', 'sglang-decode-2.service', 'gpu-c', 'active', 'running'),
  ]);
  const after = obs(2, [
    svc('decode-0', 'decode', 'sglang-decode-0.service', 'gpu-b', 'active', 'running'),
    svc('decode-2', 'decode', 'sglang-decode-2.service', 'gpu-b', 'activating', 'start'),
    svc('decode-2', 'decode', 'sglang-decode-2.service', 'gpu-c', 'active', 'running'),
  ]);
  const events = diffObservations(before, after);
  expect(events.map((e) => [e.title, e.hostId, e.worker])).toEqual([
    ['decode-2: sglang-decode-2.service on gpu-b active/running → activating/start', 'gpu-b', 'decode-2'],
  ]);
});

it('keeps the one-host pair role-named', () => {
  const before = obs(1, [svc(undefined, 'decode', 'sglang-decode.service', undefined, 'active', 'running')]);
  const after = obs(2, [svc(undefined, 'decode', 'sglang-decode.service', undefined, 'failed', 'failed')]);
  const [e] = diffObservations(before, after);
  expect(e.title).toBe('decode: sglang-decode.service active/running → failed/failed');
  expect(e.severity).toBe('error');
  expect(e.hostId).toBe('gpu-a');
  expect(e).not.toHaveProperty('worker');
});
