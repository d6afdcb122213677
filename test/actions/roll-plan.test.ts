// The roll planner over the demo fleet's shape: order, steps of a multi-node worker, the stack order and
// the pre-flight refusals an operator relies on before anything is stopped.
import { describe, expect, it } from 'vitest';
import { buildRollPlan, findRollWorker } from '../../src/main/core/actions/roll-plan';
import { rollWorkersOfFleet } from '../../src/main/core/actions/roll-fleet';
import type { Fleet, FleetWorker } from '../../src/shared/fleet';
import type { RollHealth, RollTarget } from '../../src/shared/contract';
import { fleetWorkers } from './roll-fake';

const workers = fleetWorkers();
const healthy = (): Map<string, RollHealth> =>
  new Map(workers.map((w) => [w.id, { state: 'healthy', detail: `${w.id} healthy` }]));
const plan = (target: RollTarget, health = healthy()) =>
  buildRollPlan({ workers, target, health, privilegeOf: () => 'sudo' });

describe('roll plan', () => {
  it('follows the stack order of the restart settings: decode first on request, routers left out when off', () => {
    const order = (o: { stackOrder: 'parallel' | 'decode-first'; stackIncludesRouter: boolean }) =>
      buildRollPlan({
        workers,
        target: { kind: 'deployment' },
        health: healthy(),
        privilegeOf: () => 'sudo',
        order: o,
      });
    const byDefault = order({ stackOrder: 'parallel', stackIncludesRouter: true });
    expect(byDefault.workers.map((w) => w.role)).toEqual([
      ...workers.filter((w) => w.role === 'prefill').map(() => 'prefill'),
      ...workers.filter((w) => w.role === 'decode').map(() => 'decode'),
      ...workers.filter((w) => w.role === 'router').map(() => 'router'),
    ]);
    const decodeFirst = order({ stackOrder: 'decode-first', stackIncludesRouter: false });
    expect(decodeFirst.workers.map((w) => w.role)).toEqual([
      ...workers.filter((w) => w.role === 'decode').map(() => 'decode'),
      ...workers.filter((w) => w.role === 'prefill').map(() => 'prefill'),
    ]);
    expect(decodeFirst.warnings).toContain(
      'the routers are not restarted: the restart settings leave the router out of a whole-deployment restart',
    );
  });

  it('rolls every decode worker one at a time, the multi-node worker as one with rank 1 stopped and started first', () => {
    const p = plan({ kind: 'role', role: 'decode' });
    expect(p.refused).toBeUndefined();
    expect(p.targetText).toBe('every decode worker, one at a time (3)');
    expect(p.workers.map((w) => w.name)).toEqual(['decode-0', 'decode-1', 'decode-2']);
    const d2 = p.workers[2].steps.map((s) =>
      `${s.kind} ${s.hostLabel ?? ''} ${s.port ?? s.gpus?.join(',') ?? ''}`.trim(),
    );
    expect(d2).toEqual([
      'gpu-owners gpu-c 0,1',
      'gpu-owners gpu-b 6,7',
      'stop gpu-c',
      'stop gpu-b',
      'gpus-free gpu-c 0,1',
      'gpus-free gpu-b 6,7',
      'port-free gpu-b 30202',
      'start gpu-c',
      'start gpu-b',
      'router',
    ]);
    expect(p.workers[2].steps[2].command).toBe('sudo -n systemctl --no-block stop sglang-decode-2.service');
    expect(p.checks.find((c) => c.name.includes('spans 2 nodes'))?.detail).toBe(
      'all its units restart as one worker: sglang-decode-2.service on gpu-c (rank 1), then sglang-decode-2.service on gpu-b (rank 0)',
    );
    expect(p.checks[0]).toMatchObject({
      name: 'the router keeps a healthy decode worker while decode-0 is down',
      ok: true,
      detail: 'healthy now: decode-1, decode-2',
    });
  });

  it('orders the whole deployment prefill, then decode, then the router, and checks the bootstrap port of prefill', () => {
    const p = plan({ kind: 'deployment' });
    expect(p.workers.map((w) => w.name)).toEqual([
      'prefill-0',
      'prefill-1',
      'decode-0',
      'decode-1',
      'decode-2',
      'router',
    ]);
    const ports = p.workers[1].steps.filter((s) => s.kind === 'port-free').map((s) => s.label);
    expect(ports).toEqual(['HTTP port 30101 on gpu-a is free', 'bootstrap port 8999 on gpu-a is free']);
    expect(p.workers[5].steps.map((s) => s.kind)).toEqual(['stop', 'port-free', 'start', 'router']);
    expect(p.warnings).toContain(
      'while router restarts, clients get connection errors; the workers keep running',
    );
  });

  it('puts workers the router reports unhealthy first within their role', () => {
    const h = healthy();
    h.set('http://127.0.0.3:30201', { state: 'unhealthy', detail: 'circuit breaker open' });
    expect(plan({ kind: 'role', role: 'decode' }, h).workers.map((w) => w.name)).toEqual([
      'decode-1',
      'decode-0',
      'decode-2',
    ]);
  });

  it('refuses a roll whose first step would leave the router no healthy worker of the role, naming the unhealthy ones', () => {
    const h = healthy();
    h.set('http://127.0.0.3:30201', { state: 'unhealthy', detail: 'circuit breaker open' });
    h.delete('http://127.0.0.3:30202');
    const p = plan({ kind: 'worker', worker: 'http://127.0.0.3:30200' }, h);
    expect(p.refused).toBe(
      'restarting decode-0 first would leave the router no healthy decode worker: no other decode worker is healthy now: decode-1 unhealthy (circuit breaker open); decode-2 unknown (the router reports nothing about it)',
    );
    expect(p.checks[0].ok).toBe(false);
  });

  it('finds one worker by URL (any spelling), by unit name or by name, and refuses an unknown one with the known list', () => {
    expect(findRollWorker(workers, 'HTTP://127.0.0.3:30201/')?.name).toBe('decode-1');
    expect(findRollWorker(workers, 'sglang-decode-2.service')?.name).toBe('decode-2');
    expect(findRollWorker(workers, 'prefill-1')?.name).toBe('prefill-1');
    const p = plan({ kind: 'worker', worker: 'http://10.0.0.9:30000' });
    expect(p.workers).toEqual([]);
    expect(p.refused).toMatch(
      /^no worker "http:\/\/10\.0\.0\.9:30000" in this deployment; known: router \(http:\/\/127\.0\.0\.2:30001\), prefill-0/,
    );
  });

  it('warns, rather than refuses, when the worker is the only one of its role; read-only refuses', () => {
    const solo = workers.filter((w) => w.name !== 'prefill-1');
    const p = buildRollPlan({
      workers: solo,
      target: { kind: 'role', role: 'prefill' },
      health: healthy(),
      privilegeOf: () => 'root',
    });
    expect(p.refused).toBeUndefined();
    expect(p.warnings).toEqual([
      'prefill-0 is the only prefill worker: the deployment serves no request while it restarts',
    ]);
    expect(p.workers[0].steps.find((s) => s.kind === 'stop')?.command).toBe(
      'systemctl --no-block stop sglang-prefill-0.service',
    );
    const ro = buildRollPlan({
      workers,
      target: { kind: 'deployment' },
      health: healthy(),
      privilegeOf: () => 'sudo',
      readOnly: true,
    });
    expect(ro.refused).toBe('PD Console is in read-only mode: restarts are switched off');
  });
});

describe('roll workers of a discovered fleet', () => {
  const unit = (host: string, name: string, nodeRank = 0, nnodes = 1) => ({
    host,
    unit: name,
    nodeRank,
    nnodes,
    gpus: [0, 1],
  });
  const worker = (over: Partial<FleetWorker> & Pick<FleetWorker, 'url' | 'role' | 'units'>): FleetWorker => ({
    baseUrl: over.url,
    host: over.units[0]?.host ?? 'gpu-x',
    apiUrl: 'http://127.0.0.1:30000',
    listedBy: ['gpu-a/sglang-router.service'],
    notes: [],
    ...over,
  });

  it('makes the DP ranks of one server one worker, keeps multi-node units, and leaves out what cannot be restarted', () => {
    const fleet: Fleet = {
      origin: 'gpu-a',
      hosts: [],
      routers: [
        {
          id: 'gpu-a/sglang-router.service',
          host: 'gpu-a',
          unit: 'sglang-router.service',
          apiUrl: 'http://127.0.0.1:30001',
          workers: [],
        },
      ],
      workers: [
        worker({
          url: 'http://10.0.0.2:30000@0',
          baseUrl: 'http://10.0.0.2:30000',
          dpRank: 0,
          role: 'decode',
          units: [unit('gpu-b', 'sglang-decode.service')],
        }),
        worker({
          url: 'http://10.0.0.2:30000@1',
          baseUrl: 'http://10.0.0.2:30000',
          dpRank: 1,
          role: 'decode',
          units: [unit('gpu-b', 'sglang-decode.service')],
        }),
        worker({
          url: 'http://10.0.0.3:30000',
          role: 'decode',
          units: [unit('gpu-c', 'sglang-decode.service', 0, 2), unit('gpu-d', 'sglang-decode.service', 1, 2)],
        }),
        worker({
          url: 'http://10.0.0.4:30000',
          role: 'prefill',
          bootstrapPort: 8998,
          units: [unit('gpu-e', 'sglang-prefill.service')],
        }),
        worker({
          url: 'http://10.0.0.5:30000',
          role: 'decode',
          units: [],
          unreachable: 'unreachable: connection refused',
        }),
        worker({ url: 'http://10.0.0.6:30000', role: 'regular', units: [unit('gpu-f', 'sglang.service')] }),
      ],
      unplaced: [],
      unrouted: [],
    };
    const { workers: ws, left } = rollWorkersOfFleet(fleet);
    expect(ws.map((w) => `${w.role} ${w.name} ${w.id}`)).toEqual([
      'router router gpu-a/sglang-router.service',
      'decode decode-0 http://10.0.0.2:30000',
      'decode decode-1 http://10.0.0.3:30000',
      'prefill prefill-0 http://10.0.0.4:30000',
    ]);
    expect(ws[1].routerUrls).toEqual(['http://10.0.0.2:30000@0', 'http://10.0.0.2:30000@1']);
    expect(ws[2].units.map((u) => `${u.hostId} ${u.nodeRank}`)).toEqual(['gpu-c 0', 'gpu-d 1']);
    expect(ws[3].bootstrapPort).toBe(8998);
    expect(left).toEqual([
      'http://10.0.0.5:30000: unreachable: connection refused',
      'http://10.0.0.6:30000: a regular (non-PD) worker; rolls cover prefill and decode workers',
    ]);
    const p = buildRollPlan({
      workers: ws,
      target: { kind: 'role', role: 'decode' },
      health: new Map(ws.map((w) => [w.id, { state: 'healthy', detail: 'ok' }])),
      privilegeOf: () => 'sudo',
    });
    const noGpus = buildRollPlan({
      workers: [{ ...ws[3], units: [{ ...ws[3].units[0], gpus: [] }] }],
      target: { kind: 'worker', worker: 'prefill-0' },
      health: new Map(),
      privilegeOf: () => 'sudo',
    });
    expect(noGpus.warnings).toContain(
      'the GPUs of sglang-prefill.service on gpu-e are not known (no CUDA_VISIBLE_DEVICES / --base-gpu-id found): prefill-0 starts without the check that its GPUs are free',
    );
    expect(p.workers[1].steps.filter((s) => s.kind === 'stop').map((s) => s.hostLabel)).toEqual([
      'gpu-d',
      'gpu-c',
    ]);
  });
});
