import { describe, expect, it } from 'vitest';
import { discoverDeployment, type DiscoveryResult } from '../../src/main/core/discovery/discover';
import { splitShowBatch } from '../../src/main/core/discovery/unit-text';
import {
  CAT_DECODE_A,
  CAT_LLM_TEMPLATE,
  CAT_NVIDIA,
  CAT_OLD_DECODE_A,
  CAT_PREFILL_A,
  CAT_ROUTER_A,
  CAT_SMG_ROUTER,
  CAT_SSH,
  LIST_UNITS_A,
  CATS_C,
  LLM_ENV,
  PROCESSES_C,
  SHOW_BATCH_C,
} from './units';

const codes = (r: DiscoveryResult) => r.diagnostics.map((d) => d.code).sort();
const svc = (r: DiscoveryResult, role: string) => r.deployment.services.find((s) => s.role === role);

describe('discoverDeployment — unit files (systemctl cat)', () => {
  const result = discoverDeployment({
    hostId: 'gpu1',
    listUnits: LIST_UNITS_A,
    units: [
      {
        unit: 'cron.service',
        cat: '# /lib/systemd/system/cron.service\n[Service]\nExecStart=/usr/sbin/cron -f\n',
      },
      { unit: 'dsv4-decode.service', cat: CAT_DECODE_A },
      { unit: 'dsv4-prefill.service', cat: CAT_PREFILL_A },
      { unit: 'dsv4-old-decode.service', cat: CAT_OLD_DECODE_A },
      { unit: 'nvidia-persistenced.service', cat: CAT_NVIDIA },
      { unit: 'pd-router.service', cat: CAT_ROUTER_A },
      { unit: 'ssh.service', cat: CAT_SSH },
    ],
  });

  it('finds the three roles by ExecStart content, whatever the unit names', () => {
    expect(result.found.map((f) => [f.unit, f.role])).toEqual([
      ['dsv4-decode.service', 'decode'],
      ['dsv4-prefill.service', 'prefill'],
      ['dsv4-old-decode.service', 'decode'],
      ['pd-router.service', 'router'],
    ]);
    expect(result.deployment.name).toBe('deepseek-v4 on gpu1');
  });

  it('builds endpoints from --host/--port (both flag forms) and GPUs from CUDA_VISIBLE_DEVICES / --base-gpu-id', () => {
    expect(svc(result, 'prefill')).toEqual({
      role: 'prefill',
      hostId: 'gpu1',
      unit: 'dsv4-prefill.service',
      apiUrl: 'http://127.0.0.1:30100',
      metricsUrl: 'http://127.0.0.1:30100/metrics',
      healthUrl: 'http://127.0.0.1:30100/health',
      gpus: [0, 1, 2, 3],
    });
    // The drop-in's ExecStart replaced the original (port 30999 is gone); 0.0.0.0 is dialled as 127.0.0.1.
    expect(svc(result, 'decode')).toEqual({
      role: 'decode',
      hostId: 'gpu1',
      unit: 'dsv4-decode.service',
      apiUrl: 'http://127.0.0.1:30200',
      healthUrl: 'http://127.0.0.1:30200/health',
      gpus: [4, 5, 6, 7],
    });
    expect(svc(result, 'router')).toEqual({
      role: 'router',
      hostId: 'gpu1',
      unit: 'pd-router.service',
      apiUrl: 'http://127.0.0.1:30001',
      metricsUrl: 'http://127.0.0.1:29001/metrics',
      healthUrl: 'http://127.0.0.1:30001/health',
    });
  });

  it('says exactly what to change when decode metrics are disabled', () => {
    const d = result.diagnostics.find((x) => x.code === 'metrics-disabled');
    expect(d?.severity).toBe('error');
    expect(d?.message).toMatch(
      /^decode: metrics disabled — dsv4-decode.service is configured to run without --enable-metrics/,
    );
    expect(d?.fix).toBe('add --enable-metrics to ExecStart of dsv4-decode.service and restart it');
  });

  it('two units claim decode: proposes the one the router points at, and asks the operator', () => {
    expect(result.needsOperatorChoice).toEqual([
      {
        role: 'decode',
        units: ['dsv4-decode.service', 'dsv4-old-decode.service'],
        chosen: 'dsv4-decode.service',
      },
    ]);
    const d = result.diagnostics.find((x) => x.code === 'duplicate-role');
    expect(d?.message).toContain('dsv4-old-decode.service (failed)');
    expect(d?.message).toContain('because the router points at it');
  });

  it('has no other complaints about a consistent deployment', () => {
    expect(codes(result)).toEqual(['duplicate-role', 'metrics-disabled']);
  });
});

describe('discoverDeployment — template units, EnvironmentFile, smg binary', () => {
  const units = [
    { unit: 'llm@prefill.service', cat: CAT_LLM_TEMPLATE('prefill'), envFiles: LLM_ENV },
    { unit: 'llm@decode.service', cat: CAT_LLM_TEMPLATE('decode'), envFiles: LLM_ENV },
    { unit: 'gateway.service', cat: CAT_SMG_ROUTER },
  ];
  const result = discoverDeployment({ hostId: 'h', units });

  it('resolves %i and the per-instance EnvironmentFile', () => {
    expect(svc(result, 'prefill')?.apiUrl).toBe('http://127.0.0.1:30100');
    expect(svc(result, 'decode')?.apiUrl).toBe('http://127.0.0.1:30200');
    expect(svc(result, 'decode')?.gpus).toEqual([4, 5, 6, 7]);
  });

  it('uses the smg default Prometheus listener 0.0.0.0:29000 dialled on loopback', () => {
    expect(svc(result, 'router')?.metricsUrl).toBe('http://127.0.0.1:29000/metrics');
    expect(result.found.find((f) => f.role === 'router')?.router?.flavour).toBe('smg');
  });

  it('reports a router --decode URL that matches no decode unit, with the fix', () => {
    const d = result.diagnostics.find((x) => x.code === 'router-url-mismatch');
    expect(d?.role).toBe('decode');
    expect(d?.message).toContain("router's --decode http://127.0.0.1:30201 does not match any decode unit");
    expect(d?.message).toContain('llm@decode.service listens on 127.0.0.1:30200');
    expect(d?.fix).toBe(
      'change --decode in ExecStart of gateway.service to http://127.0.0.1:30200, or --port of llm@decode.service',
    );
    expect(codes(result)).toEqual(['router-url-mismatch']);
  });

  it('without the EnvironmentFile contents it says which variables are unresolved and where they likely live', () => {
    const r = discoverDeployment({ hostId: 'h', units: units.map(({ unit, cat }) => ({ unit, cat })) });
    const d = r.diagnostics.find((x) => x.code === 'unresolved-env' && x.unit === 'llm@decode.service');
    expect(d?.message).toContain('$PORT, $BASE_GPU');
    expect(d?.message).toContain('/etc/llm/decode.env');
  });
});

describe('discoverDeployment — running processes, systemctl show batch', () => {
  const blocks = splitShowBatch(SHOW_BATCH_C);
  const result = discoverDeployment({
    hostId: 'h',
    units: [...blocks].map(([unit, show]) => ({
      unit,
      show,
      ...(CATS_C[unit] ? { cat: CATS_C[unit] } : {}),
      ...(PROCESSES_C[unit] ? { processes: PROCESSES_C[unit] } : {}),
    })),
  });

  it('reads the running argv behind bash -lc / env wrappers, keeping the CUDA_VISIBLE_DEVICES they set', () => {
    expect(result.found.map((f) => [f.unit, f.role, f.activeState ?? null])).toEqual([
      ['infer-p.service', 'prefill', 'active'],
      ['infer-d.service', 'decode', 'active'],
      ['infer-gw.service', 'router', 'activating'],
    ]);
    expect(svc(result, 'prefill')).toMatchObject({ apiUrl: 'http://127.0.0.1:31100', gpus: [0, 1] });
    expect(svc(result, 'decode')).toMatchObject({ apiUrl: 'http://127.0.0.1:31200', gpus: [2, 3] });
    expect(svc(result, 'router')).toMatchObject({
      apiUrl: 'http://127.0.0.1:31001',
      metricsUrl: 'http://127.0.0.1:29100/metrics',
    });
  });

  it('accepts --prefill=URL and localhost for a 0.0.0.0 listener; flags a pending daemon-reload', () => {
    expect(codes(result)).toEqual(['changed-on-disk']);
    expect(result.diagnostics[0].fix).toContain('systemctl daemon-reload');
  });
});

describe('discoverDeployment — what is missing', () => {
  it('no SGLang unit at all', () => {
    const r = discoverDeployment({ hostId: 'h', units: [{ unit: 'ssh.service', cat: CAT_SSH }] });
    expect(r.deployment.services).toEqual([]);
    expect(codes(r)).toEqual(['no-sglang-units']);
  });

  it('no router, and a unified server instead of a prefill', () => {
    const r = discoverDeployment({
      hostId: 'h',
      units: [
        { unit: 'dsv4-decode.service', cat: CAT_DECODE_A },
        {
          unit: 'solo.service',
          cat: '# /etc/systemd/system/solo.service\n[Service]\nExecStart=/usr/bin/python3 -m sglang.launch_server --model-path /m --enable-metrics\n',
        },
      ],
    });
    const router = r.diagnostics.find((d) => d.code === 'missing-role' && d.role === 'router');
    expect(router?.message).toMatch(/^no unit runs an SGLang router/);
    const prefill = r.diagnostics.find((d) => d.code === 'missing-role' && d.role === 'prefill');
    expect(prefill?.message).toBe(
      'no unit runs an SGLang server with --disaggregation-mode prefill (found unified server(s): solo.service)',
    );
    expect(r.diagnostics.some((d) => d.code === 'unified-server' && d.unit === 'solo.service')).toBe(true);
    expect(r.found.find((f) => f.unit === 'solo.service')?.service).toBeUndefined();
  });

  it('router not in PD mode, loopback-only decode, bootstrap port mismatch, unrouted prefill', () => {
    const r = discoverDeployment({
      hostId: 'h',
      units: [
        {
          unit: 'p.service',
          cat: '[Service]\nExecStart=python -m sglang.launch_server --disaggregation-mode prefill --port 30100 --disaggregation-bootstrap-port 9000 --enable-metrics\n',
        },
        {
          unit: 'd.service',
          cat: '[Service]\nExecStart=python -m sglang.launch_server --disaggregation-mode decode --port 30200 --enable-metrics\n',
        },
        {
          unit: 'r.service',
          cat: '[Service]\nExecStart=python -m sglang_router.launch_router --prefill http://127.0.0.1:30100 8998 --decode http://10.1.2.3:30200\n',
        },
      ],
    });
    expect(codes(r)).toEqual(['bootstrap-port-mismatch', 'router-not-pd', 'router-url-unreachable-host']);
    const host = r.diagnostics.find((d) => d.code === 'router-url-unreachable-host');
    expect(host?.message).toBe(
      "router's --decode http://10.1.2.3:30200 targets port 30200, but d.service listens on 127.0.0.1 only",
    );
    const bp = r.diagnostics.find((d) => d.code === 'bootstrap-port-mismatch');
    expect(bp?.fix).toBe(
      'use --prefill http://127.0.0.1:30100 9000 in r.service, or --disaggregation-bootstrap-port 8998 in p.service',
    );

    const unrouted = discoverDeployment({
      hostId: 'h',
      units: [
        {
          unit: 'p.service',
          cat: '[Service]\nExecStart=python -m sglang.launch_server --disaggregation-mode prefill --port 30100 --enable-metrics\n',
        },
        {
          unit: 'r.service',
          cat: '[Service]\nExecStart=smg --pd-disaggregation --decode http://127.0.0.1:30200\n',
        },
      ],
    });
    const d = unrouted.diagnostics.find((x) => x.code === 'server-not-routed');
    expect(d?.fix).toBe('add --prefill http://127.0.0.1:30100 8998 to ExecStart of r.service');
  });

  it('container, mini load balancer without metrics, UUID CUDA_VISIBLE_DEVICES', () => {
    const r = discoverDeployment({
      hostId: 'h',
      units: [
        {
          unit: 'p.service',
          cat:
            '[Service]\nEnvironment=CUDA_VISIBLE_DEVICES=GPU-5f1c2d3e-aaaa-bbbb-cccc-000000000001\n' +
            'ExecStart=/usr/bin/docker run --rm --gpus all -p 30100:30000 lmsysorg/sglang:latest python3 -m sglang.launch_server --disaggregation-mode prefill --enable-metrics\n',
        },
        {
          unit: 'lb.service',
          cat: '[Service]\nExecStart=python -m sglang.srt.disaggregation.mini_lb --prefill http://127.0.0.1:30000 --decode http://127.0.0.1:30001\n',
        },
      ],
    });
    expect(r.diagnostics.find((d) => d.code === 'container')?.message).toContain('inside docker');
    expect(r.diagnostics.find((d) => d.code === 'router-no-metrics')?.unit).toBe('lb.service');
    expect(r.diagnostics.find((d) => d.code === 'gpu-mapping')?.message).toContain('UUID');
    expect(svc(r, 'router')?.metricsUrl).toBeUndefined();
    expect(svc(r, 'router')?.apiUrl).toBe('http://127.0.0.1:8000');
    expect(svc(r, 'prefill')?.gpus).toBeUndefined();
  });

  it('skips units list-units reports as not-found', () => {
    const r = discoverDeployment({
      hostId: 'h',
      listUnits: LIST_UNITS_A,
      units: [{ unit: 'ghost.service', cat: CAT_PREFILL_A }],
    });
    expect(r.found).toEqual([]);
  });
});
