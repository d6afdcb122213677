// What a card says of a unit whose state cannot be read now: "unknown — last seen healthy at …" with the age of
// that reading, from the last reading the core kept (lastSeen) or the last one that arrived — never the old
// state as if current. And the time the figures on screen are from: the last reading that answered, not the
// time of the last push (pushes keep coming while nothing answers).
import { describe, expect, it } from 'vitest';
import { dataTime, readingClock, unknownNow } from '../../src/renderer/src/components/staleness';
import { formatClock, formatDuration } from '../../src/renderer/src/format';
import type { Observation, ServiceObservation, UnitState } from '../../src/shared/domain';

const T = 1_764_395_658_000;
const running: UnitState = {
  unit: 'sglang-decode.service',
  loadState: 'loaded',
  activeState: 'active',
  subState: 'running',
  mainPid: 4242,
  nRestarts: 0,
  activeEnterTimestamp: T - 3_600_000,
  result: 'success',
};
const healthy = { ok: true, status: 200, detail: '200 OK', checkedAt: T - 400 };

const obs = (ts: number, s: Partial<ServiceObservation>): Observation => ({
  deploymentId: 'demo',
  hostId: 'demo',
  ts,
  services: [{ role: 'decode', unit: 'sglang-decode.service', ...s }],
});

const age = (ms: number) => formatDuration(ms);
const live = (now: number) => ({ now, stalled: false });

describe('unknownNow', () => {
  it('a current reading is known; the first one still coming on a working link is not called unknown', () => {
    const o = obs(T, { systemd: running, health: healthy });
    expect(unknownNow({ role: 'decode', obs: o.services[0], latest: o, clock: live(T + 900) })).toBeNull();
    const first = obs(T, {});
    expect(unknownNow({ role: 'decode', obs: first.services[0], latest: first, clock: live(T) })).toBeNull();
  });

  it('the link down: unknown, last seen healthy at the last reading, its age counting up', () => {
    const o = obs(T + 70_000, {
      systemdError: 'no connection to demo GPU host (simulated)',
      // The core's memory of /health stays on the reading: it must not read as current.
      health: healthy,
      lastSeen: { ts: T, systemd: running, health: healthy },
    });
    const at = (now: number) =>
      unknownNow({ role: 'decode', obs: o.services[0], latest: o, clock: live(now) })!;
    expect(at(T + 70_000).text).toBe(`unknown — last seen healthy at ${formatClock(T)} (${age(70_000)} ago)`);
    expect(at(T + 95_000).text).toBe(`unknown — last seen healthy at ${formatClock(T)} (${age(95_000)} ago)`);
    expect(at(T + 70_000)).toMatchObject({
      seenAt: T,
      seen: { kind: 'serving' },
      why: 'no connection to demo GPU host (simulated)',
    });
  });

  it('says what it was when last seen: crash-looping stays crash-looping, not healthy', () => {
    const looping: UnitState = {
      ...running,
      activeState: 'activating',
      subState: 'auto-restart',
      nRestarts: 4,
      execMainCode: 1,
      execMainStatus: 1,
    };
    const o = obs(T + 5_000, {
      systemdError: 'unreachable: keepalive',
      lastSeen: { ts: T, systemd: looping },
    });
    const u = unknownNow({ role: 'decode', obs: o.services[0], latest: o, clock: live(T + 5_000) })!;
    expect(u.text).toMatch(/^unknown — last seen crash-looping at /);
    expect(u.seen?.tone).toBe('bad');
  });

  it("readings that stop arriving (the backend lost): unknown, from the last reading's own time", () => {
    const o = obs(T, { systemd: running, health: healthy });
    expect(unknownNow({ role: 'decode', obs: o.services[0], latest: o, clock: live(T + 42_000) })).toBeNull();
    const u = unknownNow({
      role: 'decode',
      obs: o.services[0],
      latest: o,
      clock: { now: T + 42_000, stalled: true },
    })!;
    expect(u.text).toBe(`unknown — last seen healthy at ${formatClock(T)} (${age(42_000)} ago)`);
    expect(u.why).toBe(`no new reading since ${formatClock(T)}`);
  });

  it("a fleet worker is timed by its own host's poll: lagging the merged reading, it is unknown", () => {
    const lagging = obs(T + 9_000, { systemd: running, health: healthy, polledAt: T });
    expect(
      unknownNow({ role: 'decode', obs: lagging.services[0], latest: lagging, clock: live(T + 9_100) })
        ?.seenAt,
    ).toBe(T);
    const fresh = obs(T + 900, { systemd: running, health: healthy, polledAt: T });
    expect(
      unknownNow({ role: 'decode', obs: fresh.services[0], latest: fresh, clock: live(T + 1_000) }),
    ).toBeNull();
  });

  it('never read: not called unknown — nothing was seen; the reading says why itself', () => {
    const o = obs(T, { systemdError: 'unreachable: connection refused' });
    expect(unknownNow({ role: 'decode', obs: o.services[0], latest: o, clock: live(T) })).toBeNull();
  });
});

describe('readingClock', () => {
  it('stalls when no reading arrived here for the quiet time; a recording under review never does', () => {
    const summary = {};
    expect(readingClock({ summary, receivedAt: T }, T + 5_000).stalled).toBe(false);
    expect(readingClock({ summary, receivedAt: T }, T + 5_001).stalled).toBe(true);
    expect(readingClock({ summary }, T + 60_000).stalled).toBe(false);
    expect(readingClock({ summary: { review: {} }, receivedAt: T }, T + 60_000).stalled).toBe(false);
  });
});

describe('dataTime', () => {
  it('is the last reading that answered, not the time of the last push', () => {
    const down = obs(T + 70_000, {
      systemdError: 'no connection to demo',
      metrics: { ok: false, at: T + 70_000, error: 'no connection to demo' },
      lastSeen: { ts: T, systemd: running },
    });
    expect(dataTime(down)).toBe(T);
    expect(dataTime(obs(T, { systemd: running }))).toBe(T);
    expect(dataTime(obs(T, {}))).toBeNull();
    expect(dataTime(undefined)).toBeNull();
  });

  it('a scrape that answers is data even when systemctl is not', () => {
    const o = obs(T + 3_000, {
      systemdError: 'systemctl show failed',
      metrics: { ok: true, scrapedAt: T + 3_000, durationMs: 4, families: 80, samples: 900 },
      lastSeen: { ts: T, systemd: running },
    });
    expect(dataTime(o)).toBe(T + 3_000);
  });
});
