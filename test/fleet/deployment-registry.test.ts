// Every open deployment is read through one interface with two implementations: services answer a request by
// resolving its id in the registry and asking the deployment, never by the shape of the id. So a service works
// against a fake deployment. Acting needs a live deployment, which only the registry's live() hands out: a
// recording has no control, and the registry says once that it cannot act.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Core } from '../../src/main/core/core';
import { DashboardService } from '../../src/main/core/services/dashboard';
import { DeploymentRegistry } from '../../src/main/core/deployment/deployment-registry';
import type { DeploymentReadings, DeploymentView } from '../../src/main/core/deployment/deployment';
import type { DashboardSnapshot, JournalAroundArgs, SeriesQuery } from '../../src/shared/contract';
import type { DeploymentConfig, HostConfig } from '../../src/shared/domain';
import { createApp, type App } from '../../src/main/compose';
import { writeSession, type WrittenSession } from '../review/helpers';

const HOST: HostConfig = { id: 'fake-host', label: 'fake host', kind: 'ssh' };
const CONFIG: DeploymentConfig = {
  id: 'fake',
  name: 'Fake PD',
  services: [
    { role: 'decode', hostId: HOST.id, unit: 'sglang-decode.service', apiUrl: 'http://127.0.0.1:1' },
  ],
};

/** A deployment made of plain objects: what it answers is what the handlers must hand back. */
function fakeDeployment() {
  const asked: { series: SeriesQuery[]; around: JournalAroundArgs[] } = { series: [], around: [] };
  const snapshot = {
    deploymentId: 'fake',
    ts: 42,
    values: { 'decode.kv_ratio': 0.5 },
  } as unknown as DashboardSnapshot;
  const readings: DeploymentReadings = {
    catalog: () => [{ key: 'decode.kv_ratio' } as never],
    series: async (q) => {
      asked.series.push(q);
      return { series: [{ key: q.keys[0], t: [1], v: [q.maxPoints] }] } as never;
    },
    dashboard: () => snapshot,
    journalAround: async (a) => {
      asked.around.push(a);
      return { lines: [], command: 'fake journal', fromMs: a.ts, toMs: a.ts } as never;
    },
    followJournal: async () => ({ followId: 'f', unit: 'u', command: 'c', lines: [] }),
  };
  const d: DeploymentView = {
    id: 'fake',
    host: HOST,
    config: CONFIG,
    latest: undefined,
    readings,
    events: () => [],
    hostStates: () => [],
  };
  return { d, asked, snapshot };
}

/** A registry holding `d` as a recording: readable, never live. */
function registryWith(d: DeploymentView): DeploymentRegistry {
  const r = new DeploymentRegistry();
  r.addRecordings({
    find: (id) => (id === d.id ? d : undefined),
    summaries: () => [],
    close: async () => undefined,
  });
  return r;
}

describe('services against a fake Deployment', () => {
  it('the dashboard answers catalogue, charts, snapshot and journal from the deployment it resolves', async () => {
    const { d, asked, snapshot } = fakeDeployment();
    const dashboard = new DashboardService(new Core({ shell: 'cli', version: 'test' }), {
      deployments: registryWith(d),
    });
    const h = dashboard.handlers();
    expect(await h.getSignalCatalog({ deploymentId: 'fake' })).toEqual([{ key: 'decode.kv_ratio' }]);
    expect(await h.getDashboard({ deploymentId: 'fake' })).toBe(snapshot);
    const batch = await h.getSeriesBatch({
      deploymentId: 'fake',
      fromMs: 10,
      groups: [
        { keys: ['decode.kv_ratio'], maxPoints: 7 },
        { keys: ['prefill.queued'], maxPoints: 9 },
      ],
    });
    expect(batch.results.map((r) => r.series[0].v[0])).toEqual([7, 9]);
    expect(asked.series.map((q) => [q.deploymentId, q.fromMs, q.keys[0]])).toEqual([
      ['fake', 10, 'decode.kv_ratio'],
      ['fake', 10, 'prefill.queued'],
    ]);
    expect((await h.journalAround({ deploymentId: 'fake', ts: 5, role: 'decode' })).command).toBe(
      'fake journal',
    );
    expect(asked.around).toEqual([{ deploymentId: 'fake', ts: 5, role: 'decode' }]);
    await expect(h.getSignalCatalog({ deploymentId: 'other' })).rejects.toMatchObject({
      code: 'unknown-deployment',
      message: 'no open deployment "other"',
    });
    dashboard.stop();
  });

  it('an action on a deployment that is only read is refused once by the registry, whatever its id looks like', async () => {
    const { d } = fakeDeployment();
    const registry = registryWith(d);
    const dashboard = new DashboardService(new Core({ shell: 'cli', version: 'test' }), {
      deployments: registry,
    });
    const refused = {
      code: 'review-read-only',
      message: '"Fake PD" is a recording: the demo fault switch needs a live deployment',
      hint: 'Open the live deployment from the start screen to act on it.',
    };
    await expect(
      dashboard.handlers().demoControl({ deploymentId: 'fake', fault: 'kv-full', on: true }),
    ).rejects.toMatchObject(refused);
    await expect(dashboard.handlers().getDemoFaults({ deploymentId: 'fake' })).rejects.toMatchObject(refused);
    expect(() => registry.live('other', 'a restart')).toThrow('no open deployment "other"');
    dashboard.stop();
  });
});

describe('a recorded deployment through the app', () => {
  let dataDir: string;
  let session: WrittenSession;
  let app: App;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'pdc-registry-'));
    session = await writeSession(join(dataDir, 'recordings'), 2);
    app = createApp({ shell: 'browser', dataDir, record: false });
  }, 60_000);

  afterAll(async () => {
    await app?.shutdown();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('is in the registry beside the live ones, answers from its file, and refuses actions with its message', async () => {
    const { summary } = await app.handlers.openSessionReview({ id: session.id });
    const id = summary.deployment.id;
    const d = app.core.deployments.resolve(id);
    expect(d.config.name).toBe(summary.deployment.name);
    expect(d.readings.catalog().some((s) => s.key === 'decode.kv_ratio')).toBe(true);
    expect((await app.handlers.listDeployments({})).map((s) => s.deployment.id)).toEqual([id]);
    expect(() => app.core.deployments.live(id, 'planRestart')).toThrow(
      `"${summary.deployment.name}" is a recording: planRestart needs a live deployment`,
    );
    for (const [name, ask] of [
      ['planRestart', () => app.handlers.planRestart({ deploymentId: id, target: 'decode' })],
      ['discovery', () => app.handlers.discover({ deploymentId: id })],
      [
        'the metrics inventory',
        () => app.handlers.getMetricsInventory({ deploymentId: id, service: 'decode' }),
      ],
      ['its Prometheus', () => app.handlers.getPrometheusStatus({ deploymentId: id })],
      [
        'older history',
        () =>
          app.handlers.getHistory({
            deploymentId: id,
            keys: ['decode.kv_ratio'],
            fromMs: 0,
            toMs: 1,
            points: 10,
          }),
      ],
      [
        'planRoll',
        () => app.handlers.planRoll({ deploymentId: id, target: { kind: 'role', role: 'decode' } }),
      ],
    ] as const)
      await expect(ask(), name).rejects.toMatchObject({
        code: 'review-read-only',
        message: `"${summary.deployment.name}" is a recording: ${name} needs a live deployment`,
        hint: 'Open the live deployment from the start screen to act on it.',
      });
    // Closing it takes it out of the registry.
    await app.handlers.closeDeployment({ deploymentId: id });
    expect(app.core.deployments.find(id)).toBeUndefined();
  });
});
