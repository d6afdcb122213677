// One forwarded channel per HTTP endpoint: requests to one server take turns on it, and a channel that dies is
// replaced. Against the demo host's SSH server, which counts the direct-tcpip channels it was asked for.
import { afterEach, expect, it } from 'vitest';
import type { Client } from 'ssh2';
import { startDemoHost, type DemoHost } from '../../src/main/demo';
import { ForwardingAgent, httpGet, SESSION } from '../../src/main/core/ssh/http-agent';
import { Semaphore } from '../../src/main/core/ssh/semaphore';
import { connect } from '../demo/helpers';

let demo: DemoHost | undefined;
let client: Client | undefined;
afterEach(async () => {
  client?.end();
  await demo?.stop();
});

async function agentOnDemo(): Promise<{ agent: ForwardingAgent; decode: string }> {
  demo = await startDemoHost({});
  const c = (client = await connect(demo));
  const s = demo.deployment.services.find((x) => x.role === 'decode')!;
  return { agent: new ForwardingAgent(c, 'demo', new Semaphore(8)), decode: s.apiUrl };
}

const tcpipOpen = (d: DemoHost): number =>
  Object.entries(d.channels.openKinds)
    .filter(([k]) => k.startsWith('tcpip '))
    .reduce((a, [, n]) => a + n, 0);

it('sends a round of /metrics, /health and /server_info to one server over one channel', async () => {
  const { agent, decode } = await agentOnDemo();
  for (let round = 0; round < 5; round++) {
    const answers = await Promise.all(
      ['/metrics', '/health', '/server_info'].map((p) => httpGet(agent, `${decode}${p}`)),
    );
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
  }
  expect(demo!.channels.tcpipChannels).toBe(1);
  expect(tcpipOpen(demo!)).toBe(1);
}, 30_000);

it('replaces a channel whose request timed out, so the next request to that server is answered', async () => {
  const { agent, decode } = await agentOnDemo();
  expect((await httpGet(agent, `${decode}/metrics`)).status).toBe(200);
  demo!.sim.setFault('metrics-hang', true, 'decode');
  const hung = httpGet(agent, `${decode}/metrics`, { timeoutMs: 300 });
  // Asked while the hung request holds the channel: it waits its turn, then gets a fresh channel.
  const health = httpGet(agent, `${decode}/health`, { timeoutMs: 5000 });
  await expect(hung).rejects.toThrow(/no complete response within 0.3 s/);
  expect((await health).status).toBe(200);
  expect(demo!.channels.tcpipChannels).toBe(2);
  await new Promise((r) => setTimeout(r, 100));
  expect(tcpipOpen(demo!)).toBe(1);
}, 30_000);

it('counts the wait for the channel against the time bound of the request that waits', async () => {
  const { agent, decode } = await agentOnDemo();
  demo!.sim.setFault('metrics-hang', true, 'decode');
  const hung = httpGet(agent, `${decode}/metrics`, { timeoutMs: 400 });
  const behind = httpGet(agent, `${decode}/server_info`, { timeoutMs: 200 });
  await expect(behind).rejects.toThrow(/server_info: no complete response within 0.2 s/);
  await expect(hung).rejects.toThrow(/no complete response/);
}, 30_000);

it('gives the longest idle tunnel back to a command waiting for the link’s channel budget, and only one', async () => {
  demo = await startDemoHost({});
  const c = (client = await connect(demo));
  const [a, b, third] = demo.deployment.services.map((s) => s.apiUrl);
  expect(third, 'the demo host serves three endpoints').toBeDefined();
  // Two slots, both held by idle tunnels: a command's slot can only come from one of them.
  const budget: Semaphore = new Semaphore(2, (kind): boolean => kind === SESSION && agent.closeIdle());
  const agent = new ForwardingAgent(c, 'demo', budget);
  expect((await httpGet(agent, `${a}/health`)).status).toBe(200);
  expect((await httpGet(agent, `${b}/health`)).status).toBe(200);
  expect(tcpipOpen(demo)).toBe(2);
  const release = await budget.hold(SESSION);
  await new Promise((r) => setTimeout(r, 100));
  // Counted by the host's SSH server: the first endpoint's tunnel (used longest ago) went, the second stayed.
  expect(demo.channels.openKinds).toEqual({ [`tcpip ${new URL(b).host}`]: 1 });
  release();
  expect((await httpGet(agent, `${a}/health`)).status).toBe(200);
  expect(demo.channels.tcpipChannels).toBe(3);
  expect(budget.maxInUse).toBe(2);
}, 30_000);
