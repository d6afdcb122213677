// HTTP through SSH when the link is gone: Node's agent opens a tunnel for a queued request from a closing
// channel's handler (Agent.removeSocket → createSocket → createConnection), where a throw ends the process;
// ssh2's forwardOut throws "Not connected" once the client is closed. The fleet-scale benchmark died of it
// when a deployment closed mid-scrape. The agent must answer through the callback instead.
import { afterEach, expect, it } from 'vitest';
import type { Duplex } from 'node:stream';
import { startDemoHost, type DemoHost } from '../../src/main/demo';
import { ForwardingAgent, httpGet } from '../../src/main/core/ssh/http-agent';
import { Semaphore } from '../../src/main/core/ssh/semaphore';
import { connect } from '../demo/helpers';

let demo: DemoHost | undefined;
afterEach(async () => {
  await demo?.stop();
});

it('fails a tunnel asked for after the link dropped through its callback, never by throwing', async () => {
  demo = await startDemoHost({});
  const c = await connect(demo);
  const agent = new ForwardingAgent(c, 'demo', new Semaphore(8));
  const url = new URL(demo.deployment.services.find((s) => s.role === 'decode')!.metricsUrl!);
  // The link works, then drops as a dead network drops it.
  expect((await httpGet(agent, url.toString())).status).toBe(200);
  const closed = new Promise<void>((r) => c.on('close', () => r()));
  c.destroy();
  await closed;
  const answer = await new Promise<Error | null>((resolve, reject) => {
    try {
      agent.createConnection(
        { host: url.hostname, port: Number(url.port) },
        (err: Error | null, _s: Duplex) => resolve(err),
      );
    } catch (err) {
      reject(err as Error);
    }
  });
  expect(answer?.message).toMatch(/could not open a tunnel to .* on demo: Not connected/);
}, 30_000);
