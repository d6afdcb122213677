// Timeline events from consecutive observations: in a fleet each worker is compared with its own previous
// reading (not the first service of its role) and its events name the worker and host; a one-host pair keeps
// its role-named events. Metrics going away become an event only once they have been failing for a few seconds.
import { describe, expect, it } from 'vitest';
import type { Observation, ServiceObservation } from '../../src/shared/domain';
import { diffObservations, type MetricsOutages } from '../../src/main/core/monitor/change-events';

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
  const events = diffObservations(before, after, new Map());
  expect(events.map((e) => [e.title, e.hostId, e.worker])).toEqual([
    ['decode-2: sglang-decode-2.service on gpu-b active/running → activating/start', 'gpu-b', 'decode-2'],
  ]);
});

it('keeps the one-host pair role-named', () => {
  const before = obs(1, [svc(undefined, 'decode', 'sglang-decode.service', undefined, 'active', 'running')]);
  const after = obs(2, [svc(undefined, 'decode', 'sglang-decode.service', undefined, 'failed', 'failed')]);
  const [e] = diffObservations(before, after, new Map());
  expect(e.title).toBe('decode: sglang-decode.service active/running → failed/failed');
  expect(e.severity).toBe('error');
  expect(e.hostId).toBe('gpu-a');
  expect(e).not.toHaveProperty('worker');
});

describe('metrics going away and coming back', () => {
  const withMetrics = (ts: number, ok: boolean): Observation =>
    obs(ts, [
      {
        ...svc('decode-1', 'decode', 'sglang-decode-1.service', 'gpu-b', 'active', 'running'),
        metrics: ok
          ? { ok: true, scrapedAt: ts, durationMs: 5, families: 10, samples: 100 }
          : {
              ok: false,
              at: ts,
              error: 'decode: no answer yet from http://10.0.0.2:30000/metrics (waiting 0.8 s)',
            },
      },
    ]);
  /** The events of a run of polls 1 s apart with metrics ok (true) or failing (false), one outage memory. */
  const run = (oks: boolean[]) => {
    const outages: MetricsOutages = new Map();
    const events = [];
    for (let k = 1; k < oks.length; k++)
      events.push(
        ...diffObservations(withMetrics(k * 1000 - 1000, oks[k - 1]), withMetrics(k * 1000, oks[k]), outages),
      );
    return { events, outages };
  };

  it('a probe late for a poll or two (under load) is no event', () => {
    const { events, outages } = run([true, false, true, false, false, true, true]);
    expect(events).toEqual([]);
    expect(outages.size).toBe(0);
  });

  it('metrics failing for 3 s are one event, with the error and how long; back again is one more', () => {
    const { events } = run([true, false, false, false, false, false, true]);
    expect(events.map((e) => [e.ts, e.severity, e.title, e.detail, e.worker])).toEqual([
      [
        4000,
        'warning',
        'decode-1: metrics unavailable',
        'decode: no answer yet from http://10.0.0.2:30000/metrics (waiting 0.8 s) (failing for 3.0 s)',
        'decode-1',
      ],
      [6000, 'info', 'decode-1: metrics available again', 'after 5.0 s without', 'decode-1'],
    ]);
  });

  it('metrics never read since open are not a change', () => {
    expect(run([false, false, false, false, false, true]).events).toEqual([]);
  });
});
