// Restart, roll, discovery and Prometheus built over their narrow interfaces with a fake deployment and the
// real registry — no SSH, no Core — answering as an operator relies on: a recording refuses actions with its
// own message, a dropped link stops a restart or a roll before anything is written, discovery reports what
// the host's units are, and Prometheus status says when nothing scrapes the deployment.
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/main/core/api-error';
import { systemClock } from '../../src/main/core/clock';
import { RestartService } from '../../src/main/core/services/restart';
import { RollService } from '../../src/main/core/services/roll';
import { rollDeploymentsOf } from '../../src/main/core/services/roll-deployments';
import { DiscoveryService } from '../../src/main/core/services/discovery';
import { PrometheusService } from '../../src/main/core/services/prometheus';
import type { DeploymentConfig, HostConfig } from '../../src/shared/domain';
import { answerSystemctl, type FakeUnit } from '../discovery/fleet-units';
import { fakeDeployment, fakeHost, fakeLink, fakeRecording } from './service-fakes';

const HOST: HostConfig = { id: 'gpu-a', label: 'gpu-a', kind: 'ssh', hostname: '10.0.0.1' };
const CONFIG: DeploymentConfig = {
  id: 'gpu-a',
  name: 'Qwen PD',
  services: [
    {
      role: 'prefill',
      hostId: HOST.id,
      unit: 'qwen-prefill.service',
      apiUrl: 'http://127.0.0.1:30000',
      metricsUrl: 'http://127.0.0.1:30000/metrics',
    },
    {
      role: 'decode',
      hostId: HOST.id,
      unit: 'qwen-decode.service',
      apiUrl: 'http://127.0.0.1:30001',
      metricsUrl: 'http://127.0.0.1:30001/metrics',
    },
    { role: 'router', hostId: HOST.id, unit: 'qwen-router.service', apiUrl: 'http://127.0.0.1:8000' },
  ],
};
const PY = '/opt/sglang/bin/python';
const UNITS: FakeUnit[] = [
  {
    unit: 'qwen-prefill.service',
    execStart: `${PY} -m sglang.launch_server --model-path /models/qwen --host 0.0.0.0 --port 30000 --disaggregation-mode prefill`,
  },
  {
    unit: 'qwen-decode.service',
    execStart: `${PY} -m sglang.launch_server --model-path /models/qwen --host 0.0.0.0 --port 30001 --disaggregation-mode decode`,
  },
  {
    unit: 'qwen-router.service',
    execStart: `${PY} -m sglang_router.launch_router --pd-disaggregation --prefill http://127.0.0.1:30000 --decode http://127.0.0.1:30001 --host 0.0.0.0 --port 8000`,
  },
];
const DOWN = {
  state: 'reconnecting',
  attempt: 3,
  nextAttemptAt: 0,
  lastError: 'connect ECONNREFUSED 10.0.0.1:22',
  since: 0,
} as const;

const disposers: Array<() => void> = [];
afterEach(() => {
  for (const d of disposers.splice(0)) d();
});

/** A fleet deployment on gpu-a that also spans gpu-b, over the given links (a host left out has none). */
function fleetOfTwo(links: Parameters<typeof fakeDeployment>[0]['links']): ReturnType<typeof fakeHost> {
  const gpuB: HostConfig = { id: 'gpu-b', label: 'gpu-b', kind: 'ssh' };
  return fakeHost([fakeDeployment({ id: 'gpu-a', host: HOST, config: CONFIG, otherHosts: [gpuB], links })]);
}

function restartOver(host: ReturnType<typeof fakeHost>): RestartService {
  const r = new RestartService(host, { lockReadOnly: false, userName: () => 'tester' });
  disposers.push(() => r.dispose());
  return r;
}

async function refusal(p: Promise<unknown>): Promise<ApiError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

describe('restart service over a fake deployment', () => {
  it('a recording refuses a restart with its own message and nothing is pushed or written', async () => {
    const host = fakeHost([], [fakeRecording({ id: 'rec', host: HOST, config: { ...CONFIG, id: 'rec' } })]);
    const h = restartOver(host).handlers();
    const e = await refusal(h.startRestart({ deploymentId: 'rec', target: 'decode' }));
    expect(e.code).toBe('review-read-only');
    expect(e.message).toBe('"Qwen PD" is a recording: startRestart needs a live deployment');
    expect((await refusal(h.planRestart({ deploymentId: 'rec', target: 'stack' }))).code).toBe(
      'review-read-only',
    );
    expect(host.pushed).toEqual([]);
    expect(host.timeline).toEqual([]);
  });

  it('a dropped link stops a restart before it starts, naming the host; the plan says why', async () => {
    const link = fakeLink('gpu-a', answerSystemctl(UNITS, ['10.0.0.1']), DOWN);
    const host = fakeHost([
      fakeDeployment({ id: 'gpu-a', host: HOST, config: CONFIG, links: { 'gpu-a': link } }),
    ]);
    const svc = restartOver(host);
    const e = await refusal(svc.handlers().startRestart({ deploymentId: 'gpu-a', target: 'decode' }));
    expect(e.code).toBe('not-connected');
    expect(e.message).toContain('not connected to gpu-a');
    const plan = await svc.planRestart({ deploymentId: 'gpu-a', target: 'decode' });
    expect(plan.blockedReason).toContain(
      'not connected to gpu-a (reconnecting: connect ECONNREFUSED 10.0.0.1:22)',
    );
    expect(host.timeline).toEqual([]);
    expect(await svc.listRestarts({ deploymentId: 'gpu-a' })).toEqual([]);
  });
});

describe('roll service over a fake deployment', () => {
  function rollOver(host: ReturnType<typeof fakeHost>): RollService {
    const restart = restartOver(host);
    const roll = new RollService(
      host,
      restart,
      rollDeploymentsOf(
        host.deployments,
        () => systemClock,
        (id) => restart.scrapesOf(id),
      ),
      {
        userName: () => 'tester',
      },
    );
    disposers.push(() => roll.dispose());
    return roll;
  }

  it('a recording refuses a roll with its own message', async () => {
    const host = fakeHost([], [fakeRecording({ id: 'rec', host: HOST, config: { ...CONFIG, id: 'rec' } })]);
    const e = await refusal(
      rollOver(host)
        .handlers()
        .startRoll({ deploymentId: 'rec', target: { kind: 'role', role: 'decode' } }),
    );
    expect(e.message).toBe('"Qwen PD" is a recording: startRoll needs a live deployment');
    expect(host.pushed).toEqual([]);
  });

  it('a fleet host whose link is down stops the roll before it starts, naming that host', async () => {
    const ok = fakeLink('gpu-a', answerSystemctl(UNITS, ['10.0.0.1']));
    const down = fakeLink('gpu-b', answerSystemctl([], ['10.0.0.2']), DOWN);
    const host = fleetOfTwo({ 'gpu-a': ok, 'gpu-b': down });
    const roll = rollOver(host);
    const e = await refusal(
      roll.startRoll({ deploymentId: 'gpu-a', target: { kind: 'role', role: 'decode' } }),
    );
    expect(e.code).toBe('not-connected');
    expect(e.message).toBe('not connected to gpu-b: a roll could not be followed there, so none is started');
    expect(host.timeline).toEqual([]);
    expect(host.pushed.filter((p) => p.name === 'rollProgress')).toEqual([]);
    expect(await roll.listRolls({ deploymentId: 'gpu-a' })).toEqual([]);
  });
});

describe('discovery service over a fake deployment', () => {
  it('reports the units the fake host runs, and the proposal discovery reads from them', async () => {
    const link = fakeLink('gpu-a', answerSystemctl(UNITS, ['10.0.0.1']));
    const host = fakeHost([
      fakeDeployment({ id: 'gpu-a', host: HOST, config: CONFIG, links: { 'gpu-a': link } }),
    ]);
    const report = await new DiscoveryService(host).handlers().discover({ deploymentId: 'gpu-a' });
    expect(report.hostId).toBe('gpu-a');
    expect(report.at).toBe(host.clock.now());
    expect(report.found.map((f) => [f.unit, f.role])).toEqual(
      expect.arrayContaining([
        ['qwen-prefill.service', 'prefill'],
        ['qwen-decode.service', 'decode'],
        ['qwen-router.service', 'router'],
      ]),
    );
    expect(Object.fromEntries(report.proposal.services.map((s) => [s.role, s.unit]))).toEqual({
      prefill: 'qwen-prefill.service',
      decode: 'qwen-decode.service',
      router: 'qwen-router.service',
    });
    // One host is a fleet of one: its own report is the only one.
    expect(report.hosts?.map((h) => h.hostId)).toEqual(['gpu-a']);
  });

  it('on a fleet, a host without a link costs only its own report, which says what to do', async () => {
    const link = fakeLink('gpu-a', answerSystemctl(UNITS, ['10.0.0.1']));
    const host = fleetOfTwo({ 'gpu-a': link });
    const report = await new DiscoveryService(host).discover('gpu-a');
    expect(report.hosts?.map((h) => h.hostId)).toEqual(['gpu-a', 'gpu-b']);
    expect(report.hosts?.[0].found.length).toBe(3);
    expect(report.hosts?.[1].diagnostics).toEqual([
      {
        severity: 'error',
        code: 'unreachable',
        message: 'gpu-b: no link to gpu-b',
        fix: 'Reconnect once the host is reachable, then discover again.',
      },
    ]);
  });

  it('a recording refuses discovery with its own message', async () => {
    const host = fakeHost([], [fakeRecording({ id: 'rec', host: HOST, config: { ...CONFIG, id: 'rec' } })]);
    const e = await refusal(new DiscoveryService(host).handlers().discover({ deploymentId: 'rec' }));
    expect(e.code).toBe('review-read-only');
  });
});

/** A Prometheus service over one host with no Prometheus, counting the SSH commands its looks send. */
function countedLooks(): { prom: PrometheusService; looks: () => number; later: (ms: number) => void } {
  let looks = 0;
  const link = fakeLink('gpu-a', (cmd) => {
    looks++;
    return answerSystemctl(UNITS, ['10.0.0.1'])(cmd);
  });
  let now = 1_700_000_000_000;
  const host = fakeHost(
    [fakeDeployment({ id: 'gpu-a', host: HOST, config: CONFIG, links: { 'gpu-a': link } })],
    [],
    () => now,
  );
  const prom = new PrometheusService(host);
  disposers.push(() => prom.dispose());
  return { prom, looks: () => looks, later: (ms) => (now += ms) };
}

describe('prometheus service over a fake deployment', () => {
  it('a deployment no Prometheus watches gets a status that says so for each endpoint, and a config to add', async () => {
    const link = fakeLink('gpu-a', answerSystemctl(UNITS, ['10.0.0.1']));
    const host = fakeHost([
      fakeDeployment({ id: 'gpu-a', host: HOST, config: CONFIG, links: { 'gpu-a': link } }),
    ]);
    const status = await new PrometheusService(host)
      .handlers()
      .getPrometheusStatus({ deploymentId: 'gpu-a' });
    expect(status.source).toBeNull();
    expect(status.found).toEqual([]);
    expect(status.hostErrors).toEqual([]);
    expect(status.endpoints.length).toBeGreaterThan(0);
    for (const ep of status.endpoints) {
      expect(ep.scraped).toBe(false);
      expect(ep.message).toMatch(/: no Prometheus found to scrape it$/);
    }
    expect(status.endpoints.map((ep) => ep.message).join('\n')).toContain('http://127.0.0.1:30001/metrics');
    expect(status.suggestedConfig).toContain('Qwen PD');
  });

  it('a fleet host it cannot ask is named among the host errors, the others still answer', async () => {
    const link = fakeLink('gpu-a', answerSystemctl(UNITS, ['10.0.0.1']));
    const host = fleetOfTwo({ 'gpu-a': link });
    const status = await new PrometheusService(host).status('gpu-a');
    expect(status.hostErrors).toEqual([{ hostLabel: 'gpu-b', message: 'no link to gpu-b' }]);
    expect(status.source).toBeNull();
  });

  it('one look on the hosts serves history and the panel for 30 s; "Check again" looks at once', async () => {
    const { prom, looks, later } = countedLooks();
    const api = prom.handlers();
    await api.getPrometheusStatus({ deploymentId: 'gpu-a' });
    const one = looks();
    expect(one).toBeGreaterThan(0);
    // The Metrics page opened again, and its charts' older history: no SSH command.
    later(10_000);
    await api.getPrometheusStatus({ deploymentId: 'gpu-a' });
    expect(looks()).toBe(one);
    // "Check again": the hosts are asked now.
    const checked = await api.getPrometheusStatus({ deploymentId: 'gpu-a', fresh: true });
    expect(looks()).toBe(2 * one);
    expect(checked.found).toEqual([]);
  });

  it('history looks for a Prometheus once in 30 s when there is none, shares a look under way, and looks again after', async () => {
    const { prom, looks, later } = countedLooks();
    // A page of charts asking at once: one look.
    expect(await Promise.all([prom.clientFor('gpu-a'), prom.clientFor('gpu-a')])).toEqual([null, null]);
    const one = looks();
    expect(one).toBeGreaterThan(0);
    later(29_000);
    expect(await prom.clientFor('gpu-a')).toBeNull();
    expect(looks()).toBe(one);
    later(2_000);
    expect(await prom.clientFor('gpu-a')).toBeNull();
    expect(looks()).toBe(2 * one);
    // A URL the operator gives is used at once.
    await prom.setSource({ deploymentId: 'gpu-a', url: 'http://127.0.0.1:9090' });
    expect(await prom.clientFor('gpu-a')).not.toBeNull();
  });

  it('a recording refuses Prometheus status with its own message', async () => {
    const host = fakeHost([], [fakeRecording({ id: 'rec', host: HOST, config: { ...CONFIG, id: 'rec' } })]);
    const e = await refusal(
      new PrometheusService(host).handlers().getPrometheusStatus({ deploymentId: 'rec' }),
    );
    expect(e.message).toBe('"Qwen PD" is a recording: its Prometheus needs a live deployment');
  });
});
