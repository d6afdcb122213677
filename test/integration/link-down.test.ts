// The path to the host blackholed (the demo's link-down fault), against the real core over real SSH: each
// observation that cannot read a unit says what was last seen of it and when, and the link's stale and lost
// states both date the outage from the host's last answer — never from when the silence was noticed.
import { afterEach, expect, it } from 'vitest';
import type { ConnectionStatus, Observation } from '../../src/shared/domain';
import { nextObservation, openDemoCore, serviceOf, type DemoCore } from '../support/demo-core';

let opened: DemoCore | undefined;
afterEach(async () => {
  opened?.demo.sim.setFault('link-down', false);
  await opened?.stop();
  opened = undefined;
});

const read = (o: Observation): boolean => o.services.every((s) => s.systemd && s.health?.ok);

it('a blackholed link: observations carry the last reading and its time; stale and lost date from the last answer', async () => {
  opened = await openDemoCore({ seed: 5, intervalMs: 300 });
  const { core, demo, deploymentId } = opened;
  const states: ConnectionStatus[] = [];
  core.on('connection', (e) => e.deploymentId === deploymentId && states.push(e.status));
  let lastRead: Observation | undefined;
  core.on('observation', (o) => {
    if (o.services.every((s) => s.systemd)) lastRead = o;
  });
  await nextObservation(core, read, 20_000);
  demo.sim.setFault('link-down', true);
  const blind = await nextObservation(core, (o) => o.services.every((s) => !s.systemd), 20_000);
  const seenAt = lastRead!.ts;
  for (const role of ['prefill', 'decode', 'router']) {
    const s = serviceOf(blind, role);
    expect(s.lastSeen, `${role}: what was last seen of it`).toMatchObject({
      ts: seenAt,
      systemd: { activeState: 'active', subState: 'running' },
    });
    expect(s.lastSeen!.systemd.mainPid).toBe(serviceOf(lastRead!, role).systemd!.mainPid);
    expect(s.lastSeen!.health?.ok, `${role}: its last /health answer`).toBe(true);
    // Not a reading of now: as one, it was recorded (and charted) as "healthy" through the outage.
    expect(s.health, `${role}: no /health reading now`).toBeUndefined();
  }
  await expect.poll(() => states.find((s) => s.state === 'stale'), { timeout: 10_000 }).toBeDefined();
  const stale = states.find((s) => s.state === 'stale') as Extract<ConnectionStatus, { state: 'stale' }>;
  expect(stale.since).toBe(seenAt);
  expect(stale.reason).toBe('no command or scrape answered');
  // ssh2's keepalives (10 s, 2 unanswered) end the link; the outage still began at the last answer.
  await expect.poll(() => states.find((s) => s.state === 'reconnecting'), { timeout: 45_000 }).toBeDefined();
  const lost = states.find((s) => s.state === 'reconnecting') as Extract<
    ConnectionStatus,
    { state: 'reconnecting' }
  >;
  expect(lost.since).toBe(seenAt);
  // The retries go on from the same moment.
  await expect
    .poll(() => states.find((s) => s.state === 'connecting' && s.lostSince !== undefined), {
      timeout: 30_000,
    })
    .toBeDefined();
  expect(states.find((s) => s.state === 'connecting' && s.lostSince !== undefined)).toMatchObject({
    lostSince: seenAt,
  });
  const gone = await nextObservation(core, (o) => o.ts > lost.since + 1000, 10_000);
  expect(serviceOf(gone, 'decode').lastSeen?.ts).toBe(seenAt);
  expect(serviceOf(gone, 'decode').health).toBeUndefined();
  demo.sim.setFault('link-down', false);
  const back = await nextObservation(core, read, 60_000);
  expect(back.services.map((s) => s.lastSeen)).toEqual([undefined, undefined, undefined]);
}, 120_000);
