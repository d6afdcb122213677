// Two requests to open the same host at once (a double click, two windows, the CLI beside the app) open it
// once: both get the one deployment, and one SSH link is made — a second set of links nobody owned was never
// stopped.
import { afterAll, expect, it } from 'vitest';
import { Core } from '../../src/main/core/core';
import { startDemoHost, type DemoHost } from '../../src/main/demo';
import { standardDeployment } from '../../src/main/compose';
import type { HostConfig } from '../../src/shared/domain';
import { demoConnectConfig } from '../support/demo-ssh';

let demo: DemoHost | undefined;
let core: Core | undefined;
afterAll(async () => {
  await core?.shutdown();
  await demo?.stop();
});

it('two connects to one host at once open it once, over one link', async () => {
  const d = (demo = await startDemoHost({ seed: 7 }));
  let links = 0;
  core = new Core({
    shell: 'cli',
    version: 'test',
    intervalMs: 500,
    resolveSsh: async () => {
      links++;
      return demoConnectConfig(d);
    },
    defaultDeployment: (h) => standardDeployment(h),
  });
  const host: HostConfig = { id: 'box', label: 'box', kind: 'ssh', hostname: '127.0.0.1' };
  const [a, b] = await Promise.all([core.connectHost({ host }), core.connectHost({ host })]);
  expect(b.deployment.id).toBe(a.deployment.id);
  expect((await core.listDeployments()).map((s) => s.deployment.id)).toEqual([a.deployment.id]);
  expect(links).toBe(1);
}, 60_000);
