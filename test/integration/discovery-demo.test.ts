// Discovery over real SSH against the demo host: the proposal must name the units and endpoints the
// demo really runs, and a server without --enable-metrics must come with the exact fix.
import { afterEach, describe, expect, it } from 'vitest';
import { SshConnection } from '../../src/main/core/ssh/connection';
import { runDiscovery } from '../../src/main/core/discovery/run-discovery';
import { startDemoHost, type DemoHost } from '../../src/main/demo';
import { demoConnectConfig } from '../support/demo-ssh';

let demo: DemoHost | undefined;
const d = (): DemoHost => {
  if (!demo) throw new Error('no demo host started');
  return demo;
};
let conn: SshConnection | undefined;
afterEach(async () => {
  await conn?.stop();
  await demo?.stop();
});

async function connect(opts: Parameters<typeof startDemoHost>[0] = {}): Promise<SshConnection> {
  const d = (demo = await startDemoHost(opts));
  conn = new SshConnection({
    label: 'demo',
    configure: async () => demoConnectConfig(d),
  });
  await conn.start();
  await conn.waitConnected(10_000);
  return conn;
}

describe('discovery against the demo host', () => {
  it('finds prefill, decode and router by what they execute, with their endpoints and GPUs', async () => {
    const c = await connect();
    const r = await runDiscovery(c, 'demo', 'demo host');
    const byRole = Object.fromEntries(r.deployment.services.map((s) => [s.role, s]));
    expect(byRole.prefill).toMatchObject({
      unit: 'sglang-prefill.service',
      apiUrl: 'http://127.0.0.1:30100',
      metricsUrl: 'http://127.0.0.1:30100/metrics',
      gpus: [0, 1, 2, 3],
    });
    expect(byRole.decode).toMatchObject({
      unit: 'sglang-decode.service',
      metricsUrl: 'http://127.0.0.1:30200/metrics',
      gpus: [4, 5, 6, 7],
    });
    expect(byRole.router).toMatchObject({
      unit: 'sglang-router.service',
      metricsUrl: 'http://127.0.0.1:29001/metrics',
    });
    expect(r.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  });

  it('reads what really runs: each unit’s process (ps, /proc/<pid>/cmdline), the port from its EnvironmentFile', async () => {
    const c = await connect();
    const r = await runDiscovery(c, 'demo', 'demo host');
    const units = d().sim.units;
    expect(r.found.map((f) => [f.unit, f.source, f.pid])).toEqual(
      expect.arrayContaining([
        ['sglang-prefill.service', 'process', units.prefill.mainPid],
        ['sglang-decode.service', 'process', units.decode.mainPid],
        ['sglang-router.service', 'process', units.router.mainPid],
      ]),
    );
    // prefill's unit says --port ${PREFILL_PORT}; the running process says 30100.
    expect(r.deployment.services.find((s) => s.role === 'prefill')?.apiUrl).toBe('http://127.0.0.1:30100');
    expect(r.diagnostics.filter((x) => x.severity !== 'info')).toEqual([]);
  });

  it('says what to change when a server runs without --enable-metrics', async () => {
    const c = await connect({ metricsDisabled: ['decode'] });
    const r = await runDiscovery(c, 'demo', 'demo host');
    const diag = r.diagnostics.find((d) => d.code === 'metrics-disabled');
    expect(diag?.role).toBe('decode');
    expect(`${diag?.message} ${diag?.fix}`).toContain('--enable-metrics');
    expect(`${diag?.message} ${diag?.fix}`).toContain('sglang-decode.service');
    expect(r.deployment.services.find((s) => s.role === 'decode')?.metricsUrl).toBeUndefined();
  });
});
