// The connection banner and the header's "updated": the host's last answer named with its age counting up (a
// stale link read "no command or scrape answered for 3.0 s" for minutes), the figures dated from the last
// reading that answered (they read the current clock), a fleet host's outage on its own line naming the
// workers it leaves unknown, and the header not ticking while nothing arrives.
import { describe, expect, it } from 'vitest';
import { bannerLines, updatedText } from '../../src/renderer/src/components/link-banner';
import { formatClock, formatDuration } from '../../src/renderer/src/format';
import type {
  ConnectionStatus,
  DeploymentSummary,
  HostConfig,
  Observation,
  UnitState,
} from '../../src/shared/domain';

const T = 1_764_395_658_000;
const host = (id: string): HostConfig => ({ id, label: id, kind: 'demo' });
const running: UnitState = {
  unit: 'sglang-decode.service',
  loadState: 'loaded',
  activeState: 'active',
  subState: 'running',
  mainPid: 1,
  nRestarts: 0,
  activeEnterTimestamp: T - 60_000,
  result: 'success',
};
const oneHost: DeploymentSummary = {
  deployment: {
    id: 'demo',
    name: 'demo',
    services: [{ role: 'decode', hostId: 'demo', unit: 'sglang-decode.service', apiUrl: 'http://x:1' }],
  },
  host: host('demo'),
  connection: { state: 'connected', since: T - 60_000 },
};
// Pushes keep coming every second while nothing answers; the last answer was at T.
const blind = (ts: number): Observation => ({
  deploymentId: 'demo',
  hostId: 'demo',
  ts,
  services: [
    {
      role: 'decode',
      unit: 'sglang-decode.service',
      systemdError: 'systemctl show on demo has not answered for 9.8 s',
      metrics: { ok: false, at: ts, error: 'no answer yet' },
      lastSeen: { ts: T, systemd: running },
    },
  ],
});
const clockAge = (ts: number, now: number) => `${formatClock(ts)} (${formatDuration(now - ts)} ago)`;
const live = (now: number) => ({ now, stalled: false });

describe('bannerLines', () => {
  it('a stale link: since the last answer, its age counting up; the figures are from then', () => {
    const stale: ConnectionStatus = { state: 'stale', since: T, reason: 'no command or scrape answered' };
    const view = (now: number) => ({ summary: oneHost, connection: stale, latest: blind(now - 400) });
    for (const now of [T + 3_000, T + 70_000]) {
      const [l] = bannerLines(view(now), live(now));
      expect(l).toMatchObject({ state: 'stale', tone: 'warn' });
      expect(l.text).toBe(
        `The host stopped answering at ${clockAge(T, now)}: no command or scrape answered. ` +
          `The figures below are from ${clockAge(T, now)}; what the units do now is unknown.`,
      );
    }
  });

  it('lost and retrying: since the outage began, the attempt, and the figures from the last answer', () => {
    const now = T + 95_000;
    const lost: ConnectionStatus = { state: 'connecting', since: now - 2_000, attempt: 5, lostSince: T };
    const [l] = bannerLines({ summary: oneHost, connection: lost, latest: blind(now) }, live(now));
    expect(l.tone).toBe('bad');
    expect(l.text).toContain(`was lost at ${clockAge(T, now)} — reconnecting (attempt 5, under way)`);
    expect(l.text).toContain(`The figures below are from ${clockAge(T, now)}`);
  });

  it('connected, but nothing new is known: readings stopped arriving, or arrive with nothing that answered', () => {
    const up = { summary: oneHost, connection: oneHost.connection, latest: blind(T + 1_000) };
    expect(bannerLines(up, live(T + 30_000))).toEqual([]);
    expect(bannerLines(up, { now: T + 30_000, stalled: true })[0]).toMatchObject({ state: 'no-data' });
    const empty = { ...up, latest: blind(T + 9_000) };
    expect(bannerLines(empty, live(T + 9_000))[0]).toMatchObject({ state: 'no-data' });
  });

  it("a fleet: another host's outage gets its own line with the workers it leaves unknown; its first connect does not", () => {
    const summary: DeploymentSummary = {
      deployment: {
        id: 'f',
        name: 'f',
        services: [
          { role: 'router', id: 'router', hostId: 'gpu-a', unit: 'r.service', apiUrl: 'http://a:1' },
          { role: 'decode', id: 'decode-0', hostId: 'gpu-b', unit: 'd0.service', apiUrl: 'http://b:1' },
          {
            role: 'decode',
            id: 'decode-2',
            hostId: 'gpu-b',
            unit: 'd2.service',
            apiUrl: 'http://b:2',
            units: [
              { hostId: 'gpu-b', unit: 'd2.service', nodeRank: 0 },
              { hostId: 'gpu-c', unit: 'd2.service', nodeRank: 1 },
            ],
          },
        ],
      },
      host: host('gpu-a'),
      connection: { state: 'connected', since: T - 60_000 },
      hosts: [
        { host: host('gpu-a'), connection: { state: 'connected', since: T - 60_000 } },
        {
          host: host('gpu-b'),
          connection: { state: 'stale', since: T, reason: 'no command or scrape answered' },
        },
        { host: host('gpu-c'), connection: { state: 'connecting', since: T, attempt: 1 } },
      ],
    };
    const latest: Observation = { deploymentId: 'f', hostId: 'gpu-a', ts: T + 10_000, services: [] };
    const lines = bannerLines({ summary, connection: summary.connection, latest }, live(T + 10_000));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ host: 'gpu-b', state: 'stale' });
    expect(lines[0].text).toBe(
      `gpu-b stopped answering at ${clockAge(T, T + 10_000)}: no command or scrape answered. Unknown now: decode-0, decode-2.`,
    );
  });
});

describe('updatedText', () => {
  it('does not tick while nothing answers: the time of the last answer, then how long ago', () => {
    expect(updatedText(blind(T + 1_000), live(T + 1_000))).toEqual({
      text: `updated ${formatClock(T)}`,
      quiet: false,
    });
    expect(updatedText(blind(T + 60_000), live(T + 60_000))).toEqual({
      text: `no data since ${formatClock(T)} (${formatDuration(60_000)})`,
      quiet: true,
    });
    // The backend gone: no reading arrives at all.
    expect(updatedText(blind(T + 1_000), { now: T + 20_000, stalled: true })).toMatchObject({ quiet: true });
    expect(updatedText(undefined, live(T))).toBeNull();
  });
});
