// The alerts on the demo host over real SSH, with the demo's faults and a network path that goes silent: a
// decode whose /metrics answers 500 keeps its KV alert (marked "no data"), a lost link is one alert for its host
// instead of one per role, and a restart run by this console makes its unit's alerts expected, with nothing
// notified. The demo runs 50 times faster than real time (its KV fills and its restart takes seconds); the core
// polls every 500 ms on the real clock.
import { afterEach, describe, expect, it } from 'vitest';
import { acceleratedClock, systemClock } from '../../src/main/core/clock';
import { Core } from '../../src/main/core/core';
import { DashboardService } from '../../src/main/core/services/dashboard';
import { RestartService } from '../../src/main/core/services/restart';
import { memoryCell } from '../../src/main/core/config/setting-cell';
import { DEFAULT_ALERT_RULES } from '../../src/main/core/alerts/rules';
import { startDemoHost, type DemoHost } from '../../src/main/demo';
import { standardDeployment } from '../../src/main/compose';
import type { ActiveAlert, AlertRule, DashboardPush } from '../../src/shared/contract';
import type { AppEvent } from '../../src/shared/domain';
import { tcpBlackhole, type Blackhole } from '../support/tcp-blackhole';

/** The default rules with holds short enough for a test, the link's stale detection (1.5 s) still first. */
const RULES: AlertRule[] = DEFAULT_ALERT_RULES.map((r) => ({
  ...r,
  roles: [...r.roles],
  ...(r.kind === 'kv-high' ? { forS: 1, clearForS: 3 } : {}),
  ...(r.kind === 'metrics-stale' ? { forS: 4, clearForS: 2 } : {}),
  ...(r.kind === 'service-inactive' ? { forS: 1, clearForS: 2 } : {}),
  ...(r.kind === 'health-failing' ? { forS: 2, clearForS: 2 } : {}),
}));

interface Rig {
  core: Core;
  demo: DemoHost;
  net: Blackhole;
  dashboard: DashboardService;
  restart: RestartService;
  deploymentId: string;
  events: AppEvent[];
  /** The firing alerts of every dashboard push, in order. */
  pushes: ActiveAlert[][];
  stop(): Promise<void>;
}

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.stop();
  rig = undefined;
});

async function open(speed = 50): Promise<Rig> {
  const clock = acceleratedClock(speed);
  const demo = await startDemoHost({ clock, seed: 11 });
  const net = await tcpBlackhole(demo.port);
  const core = new Core({
    shell: 'cli',
    version: 'test',
    clock: systemClock,
    intervalMs: 500,
    demo: async () => ({
      ...demo,
      port: net.port,
      deployment: standardDeployment({ id: 'demo', label: 'demo', kind: 'demo' }),
    }),
  });
  const dashboard = new DashboardService(core, { alerts: memoryCell({ rules: RULES, deployments: {} }) });
  const restart = new RestartService(core, {
    clockFor: () => clock,
    pollMs: 1000,
    minRealGapMs: 20,
    userName: () => 'tester',
  });
  dashboard.attachRestarts((id) => restart.running.restarting(id));
  const events: AppEvent[] = [];
  const pushes: ActiveAlert[][] = [];
  core.on('event', (e) => events.push(e));
  core.on('dashboard', (p: DashboardPush) => pushes.push(p.alerts));
  const summary = await core.openDemo({});
  return {
    core,
    demo,
    net,
    dashboard,
    restart,
    deploymentId: summary.deployment.id,
    events,
    pushes,
    stop: async () => {
      restart.dispose();
      dashboard.stop();
      await core.shutdown();
      await net.close();
      await demo.stop();
    },
  };
}

/** Resolves at the first dashboard push whose firing alerts satisfy `pred`; rejects after `timeoutMs` of real time. */
function alertsWhere(r: Rig, pred: (a: ActiveAlert[]) => boolean, timeoutMs: number, what: string) {
  return new Promise<ActiveAlert[]>((resolve, reject) => {
    const t = setTimeout(() => {
      r.core.off('dashboard', on);
      reject(
        new Error(`${what}: not within ${timeoutMs} ms; last alerts: ${JSON.stringify(r.pushes.at(-1))}`),
      );
    }, timeoutMs);
    const on = (p: DashboardPush): void => {
      if (!pred(p.alerts)) return;
      clearTimeout(t);
      r.core.off('dashboard', on);
      resolve(p.alerts);
    };
    r.core.on('dashboard', on);
  });
}

/** Waits for `n` more dashboard pushes (polls), whatever they hold. */
const polls = (r: Rig, n: number): Promise<ActiveAlert[]> => {
  let seen = 0;
  return alertsWhere(r, () => ++seen >= n, n * 3000, `${n} polls`);
};

const alertEvents = (r: Rig): AppEvent[] => r.events.filter((e) => e.kind === 'alert');
const has = (key: string) => (as: ActiveAlert[]) => as.some((a) => a.key === key);

describe('alerts on the demo host', () => {
  it('/metrics answering 500 does not resolve the KV alert: it stays, marked without data', async () => {
    rig = await open();
    const r = rig;
    r.demo.sim.setFault('kv-full', true, 'decode');
    await alertsWhere(r, has('decode-kv-high|decode'), 30_000, 'the decode KV alert fires');
    r.demo.sim.setFault('metrics-500', true, 'decode');
    const stale = await alertsWhere(
      r,
      (as) => as.some((a) => a.key === 'decode-kv-high|decode' && a.noData !== undefined),
      20_000,
      'the KV alert marked without data',
    );
    const kv = stale.find((a) => a.key === 'decode-kv-high|decode')!;
    expect(kv.noData!.reason).toBe('no successful /metrics scrape of decode');
    // And it stays so, poll after poll, while decode's /metrics fails (its stale-metrics alert fires beside it).
    await alertsWhere(r, has('metrics-stale|decode'), 20_000, 'decode metrics stale');
    for (const as of [await polls(r, 4)])
      expect(as.find((a) => a.key === 'decode-kv-high|decode')?.noData).toBeDefined();
    expect(
      alertEvents(r)
        .filter((e) => e.alert?.key === 'decode-kv-high|decode')
        .map((e) => e.alert?.change),
    ).toEqual(['fired']);
    // Its /metrics back (the KV still full): the alert has data again, still firing, never resolved in between.
    r.demo.sim.setFault('metrics-500', false, 'decode');
    await alertsWhere(
      r,
      (as) => as.some((a) => a.key === 'decode-kv-high|decode' && a.noData === undefined),
      20_000,
      'the KV alert with data again',
    );
    expect(
      alertEvents(r).some((e) => e.alert?.key === 'decode-kv-high|decode' && e.alert.change !== 'fired'),
    ).toBe(false);
  }, 120_000);

  it('a lost link is one alert for the host, not one per role; the alerts of before stay, without data', async () => {
    rig = await open();
    const r = rig;
    r.demo.sim.setFault('kv-full', true, 'decode');
    await alertsWhere(r, has('decode-kv-high|decode'), 30_000, 'the decode KV alert fires');
    await polls(r, 2);
    const before = alertEvents(r).length;
    r.net.swallow();
    const during = await alertsWhere(
      r,
      (as) => as.some((a) => a.host !== undefined),
      30_000,
      'the host alert',
    );
    // Ten more seconds of outage: still one new alert, and the KV alert as last seen.
    const later = await polls(r, 20);
    for (const as of [during, later]) {
      const host = as.find((a) => a.host !== undefined)!;
      expect(host.key).toBe(`metrics-stale|host:${host.host}`);
      expect(host.title).toMatch(/ unreachable$/);
      // Nothing per role of what the link took: no stale metrics, no stopped or failing service.
      expect(as.filter((a) => a.role !== undefined && a.noData === undefined).map((a) => a.key)).toEqual([]);
      expect(as.find((a) => a.key === 'decode-kv-high|decode')!.noData?.reason).toMatch(/unreachable/);
    }
    const outage = alertEvents(r).slice(before);
    expect(outage.map((e) => [e.alert?.change, e.title])).toEqual([
      ['fired', expect.stringMatching(/unreachable$/)],
    ]);
    expect(outage[0].alert?.notify).toBe(true);
    // Back: the host alert resolves; the KV alert (decode still full) was never resolved.
    r.net.restore();
    await alertsWhere(r, (as) => !as.some((a) => a.host !== undefined), 60_000, 'the host alert resolves');
    expect(
      alertEvents(r)
        .filter((e) => e.alert?.key === 'decode-kv-high|decode')
        .map((e) => e.alert?.change),
    ).toEqual(['fired']);
    const kinds = alertEvents(r)
      .slice(before)
      .map((e) => e.alert?.key);
    expect(kinds.filter((k) => k?.startsWith('metrics-stale|') && !k.includes('host:'))).toEqual([]);
  }, 120_000);

  it('a restart run by this console makes its unit’s alerts expected: nothing notified, all over after it', async () => {
    // Slower than the other tests: a Type=simple decode is active again at once and loads for about two minutes of
    // demo time, which at 8× leaves the core a dozen seconds to see /health fail while it loads.
    rig = await open(8);
    const r = rig;
    await alertsWhere(r, () => true, 30_000, 'a first push');
    await polls(r, 4);
    const before = alertEvents(r).length;
    const { operation } = await r.restart.startRestart({ deploymentId: r.deploymentId, target: 'decode' });
    const expected = await alertsWhere(
      r,
      (as) => as.some((a) => a.role === 'decode' && a.expected !== undefined),
      60_000,
      'an expected decode alert during the restart',
    );
    for (const a of expected.filter((x) => x.role === 'decode')) expect(a.expected).toContain(operation.id);
    const done = await r.restart.whenDone(operation.id);
    expect(done.state).toBe('succeeded');
    // After the restart: every alert it caused is gone, quietly.
    await alertsWhere(r, (as) => as.length === 0, 30_000, 'no alert left after the restart');
    await polls(r, 6);
    const during = alertEvents(r).slice(before);
    expect(during.length).toBeGreaterThan(0);
    expect(during.filter((e) => e.alert?.notify !== false).map((e) => e.title)).toEqual([]);
    expect(
      during
        .filter((e) => e.alert?.change === 'fired')
        .every((e) => e.alert?.expected?.includes(operation.id)),
    ).toBe(true);
  }, 120_000);
});
