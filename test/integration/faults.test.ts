// Hostile endpoints and a host that misbehaves, against the real core over SSH: only the affected service
// degrades, with a clear state; memory stays bounded; the link heals after a reboot.
import { afterEach, describe, expect, it } from 'vitest';
import type { Core } from '../../src/main/core/core';
import type { DemoHost, FaultName } from '../../src/main/demo';
import type { Observation } from '../../src/shared/domain';
import { nextObservation, openDemoCore, serviceOf as svc, type DemoCore } from '../support/demo-core';

let opened: DemoCore | undefined;
afterEach(async () => {
  await opened?.stop();
  opened = undefined;
});

async function open(): Promise<{ c: Core; d: DemoHost; id: string }> {
  opened = await openDemoCore({ seed: 11, intervalMs: 300 });
  return { c: opened.core, d: opened.demo, id: opened.deploymentId };
}

const next = (c: Core, pred: (o: Observation) => boolean, timeoutMs = 20_000): Promise<Observation> =>
  nextObservation(c, pred, timeoutMs);

const healthy = (o: Observation): boolean => o.services.every((s) => s.systemd && s.metrics?.ok);

const cases: Array<[FaultName, RegExp]> = [
  ['metrics-500', /HTTP 500/],
  ['metrics-hang', /no complete response within 5 s/],
  ['metrics-trickle', /no complete response within 5 s/],
  ['metrics-huge', /larger than 16 MB/],
  ['metrics-garbage', /not valid prometheus exposition|HTML page/],
];

describe('a hostile /metrics endpoint degrades only its own service', () => {
  it.each(cases)('%s', async (fault, message) => {
    const { c, d } = await open();
    await next(c, healthy);
    const heapBefore = process.memoryUsage().heapUsed;
    d.sim.setFault(fault, true, 'decode');
    // A slow endpoint first shows as "no answer yet", then with the reason once the request gives up.
    const bad = await next(
      c,
      (o) => {
        const m = svc(o, 'decode').metrics;
        return !!m && !m.ok && message.test(m.error);
      },
      25_000,
    );
    // The others keep updating meanwhile.
    const later = await next(c, (o) => o.ts > bad.ts);
    expect(svc(later, 'prefill').metrics?.ok).toBe(true);
    expect(svc(later, 'router').metrics?.ok).toBe(true);
    expect(svc(later, 'prefill').kv).toBeDefined();
    // ...at their own pace: a hung decode endpoint does not hold the poll (300 ms) for its 5 s timeout. The
    // bound sits well below that timeout, not near the interval, so a loaded machine's slow poll does not fail it.
    expect(later.ts - bad.ts).toBeLessThan(4000);
    // A 50 MB body is cut at the cap, not buffered: the heap does not grow by anything like it.
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(40 * 1024 * 1024);
    d.sim.setFault(fault, false, 'decode');
    await next(c, (o) => svc(o, 'decode').metrics?.ok === true, 25_000);
  });
});

describe('a misbehaving host', () => {
  it('malformed systemctl output becomes a per-poll error, metrics keep flowing', async () => {
    const { c, d } = await open();
    await next(c, healthy);
    d.sim.setFault('malformed-systemctl', true);
    const o = await next(c, (x) => !!svc(x, 'decode').systemdError);
    expect(svc(o, 'decode').systemdError).toMatch(/systemctl show/);
    expect(svc(o, 'decode').metrics?.ok).toBe(true);
    d.sim.setFault('malformed-systemctl', false);
    await next(c, (x) => !!svc(x, 'decode').systemd);
  });

  it('a host reboot drops the link, which heals by itself; the units come back', async () => {
    const { c, d, id } = await open();
    await next(c, healthy);
    const states: string[] = [];
    c.on('connection', (e) => e.deploymentId === id && states.push(e.status.state));
    d.sim.reboot(3_000);
    await expect.poll(() => states.includes('reconnecting'), { timeout: 15_000 }).toBe(true);
    await expect.poll(() => states.at(-1), { timeout: 40_000 }).toBe('connected');
    const o = await next(c, (x) => x.services.every((s) => !!s.systemd), 20_000);
    expect(o.services.map((s) => s.systemd?.activeState)).not.toContain(undefined);
  }, 90_000);
});
