// Eight hosts at once, one unreachable: each has its own connection and state; the dead one fails with a
// clear message and does not slow down or break the seven others.
import { afterAll, describe, expect, it } from 'vitest';
import { Core } from '../../src/main/core/core';
import { startDemoHost, type DemoHost } from '../../src/main/demo';
import { standardDeployment } from '../../src/main/compose';
import type { HostConfig, Observation } from '../../src/shared/domain';
import { demoConnectConfig } from '../support/demo-ssh';

const demos: DemoHost[] = [];
let core: Core | undefined;
afterAll(async () => {
  await core?.shutdown();
  await Promise.all(demos.map((d) => d.stop()));
});

describe('eight hosts', () => {
  it('monitors seven demo hosts while the eighth is unreachable', async () => {
    for (let i = 0; i < 7; i++) demos.push(await startDemoHost({ seed: 100 + i }));
    const byId = new Map(demos.map((d, i) => [`gpu-${i}`, d]));
    core = new Core({
      shell: 'cli',
      version: 'test',
      intervalMs: 500,
      resolveSsh: async (host: HostConfig) => {
        const d = byId.get(host.id);
        if (!d) return { host: '127.0.0.1', port: 1, username: 'nobody', readyTimeout: 3000 };
        return demoConnectConfig(d);
      },
      defaultDeployment: (host) => standardDeployment(host),
    });
    const hosts: HostConfig[] = Array.from({ length: 8 }, (_, i) => ({
      id: `gpu-${i}`,
      label: `gpu-${i}`,
      kind: 'ssh',
      hostname: '127.0.0.1',
    }));
    const results = await Promise.allSettled(hosts.map((host) => core!.connectHost({ host })));
    expect(results.slice(0, 7).every((r) => r.status === 'fulfilled')).toBe(true);
    const dead = results[7];
    expect(dead.status).toBe('rejected');
    if (dead.status === 'rejected')
      expect(String(dead.reason.message)).toMatch(/gpu-7.*refused|refused.*gpu-7|cannot connect to gpu-7/);

    // Every live host produces complete observations of its own.
    const seen = new Set<string>();
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`only ${[...seen].join(',')} reported`)), 20_000);
      core!.on('observation', (o: Observation) => {
        if (o.services.every((s) => s.systemd && s.metrics?.ok) && o.services.some((s) => s.kv))
          seen.add(o.hostId);
        if (seen.size === 7) {
          clearTimeout(t);
          resolve();
        }
      });
    });
    const list = await core.listDeployments({});
    expect(list.map((d) => d.host.id).sort()).toEqual(hosts.slice(0, 7).map((h) => h.id));
    expect(list.every((d) => d.connection.state === 'connected')).toBe(true);
    expect(process.memoryUsage().rss).toBeLessThan(1024 * 1024 * 1024);
  }, 60_000);
});
