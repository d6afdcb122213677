// The journal of a unit is read once, by the monitor's tail, however many listen: a journal view, a restart and
// the recorder all hear the same journalctl reads over real SSH (counted on the demo host's side), and the tails
// of a host's units share one `journalctl --follow`. Each listener gets the bounded backlog first and then every
// new line, with nothing lost or repeated between the two, nor across a dropped link, polling or following.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { acceleratedClock, systemClock } from '../../src/main/core/clock';
import { Core } from '../../src/main/core/core';
import { DashboardService } from '../../src/main/core/services/dashboard';
import { RecordingService } from '../../src/main/core/services/recording';
import { RestartService } from '../../src/main/core/services/restart';
import { UnitJournalTail } from '../../src/main/core/journal/unit-tail';
import { HostJournalFollow } from '../../src/main/core/journal/host-follow';
import { readRecording } from '../../src/main/core/recording';
import { startDemoHost, type DemoHost } from '../../src/main/demo';
import { standardDeployment } from '../../src/main/compose';
import type { JournalEntry } from '../../src/shared/contract';
import { openDemoCore, type DemoCore } from '../support/demo-core';

const DECODE = 'sglang-decode.service';

/** journalctl command lines the demo host received for one unit. */
function journalctlFor(demo: DemoHost, unit: string): string[] {
  return demo.channels
    .execsSince()
    .map((e) => e.command)
    .filter((c) => /^journalctl\b/.test(c) && c.includes(`-u ${unit}`));
}

async function until(what: string, ok: () => boolean, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

describe('one journal tail per unit', () => {
  it('a journal view, a restart and the recorder listen to one reader of the unit, fed by one follow of the host', async () => {
    const clock = acceleratedClock(25);
    const demo = await startDemoHost({ clock, seed: 5 });
    const dir = mkdtempSync(join(tmpdir(), 'pdc-tail-'));
    const core = new Core({
      shell: 'cli',
      version: 'test',
      clock: systemClock,
      intervalMs: 500,
      demo: async () => ({
        ...demo,
        deployment: standardDeployment({ id: 'demo', label: 'demo', kind: 'demo' }),
      }),
    });
    const dashboard = new DashboardService(core);
    const recording = new RecordingService(core, {
      dir: join(dir, 'recordings'),
      exportDir: join(dir, 'exports'),
      appVersion: 'test',
      clockFor: () => clock,
    });
    const restart = new RestartService(core, {
      clockFor: () => clock,
      pollMs: 1000,
      minRealGapMs: 20,
      userName: () => 'tester',
    });
    cleanup = async () => {
      restart.dispose();
      await core.shutdown();
      dashboard.stop();
      await recording.shutdown();
      await demo.stop();
    };
    const { deployment } = await core.openDemo({});
    const id = deployment.id;
    await until('the recording to start', () => recording.status().active[0]?.state === 'recording');
    const tail = core.journalTail(id, DECODE);
    // The monitor (for the unit's evidence: exits, errors, loads) and the recorder listen from the start.
    await until('the recorder to listen', () => tail.listeners === 2);

    const view: JournalEntry[] = [];
    core.on('journal', (e) => {
      if (e.followId === followId) view.push(...e.lines);
    });
    const followed = await dashboard
      .handlers()
      .followJournal({ deploymentId: id, role: 'decode', lines: 50 });
    const followId = followed.followId;
    expect(followed.unit).toBe(DECODE);
    expect(followed.lines.length).toBe(50);
    expect(tail.listeners).toBe(3);

    const { operation } = await restart.startRestart({ deploymentId: id, target: 'decode' });
    let most = 0;
    const watching = setInterval(() => (most = Math.max(most, tail.listeners)), 20);
    const end = await restart.whenDone(operation.id);
    clearInterval(watching);
    expect(end.state).toBe('succeeded');
    // While the restart ran, the view, the restart, the recorder and the monitor listened to this one tail.
    expect(most).toBe(4);
    // The restart's listener is gone with the restart.
    expect(tail.listeners).toBe(3);
    const ready = /fired up and ready to roll/;
    expect(end.services[0].journal.some((l) => ready.test(l.text))).toBe(true);
    await until('the view to hear the ready line', () => view.some((l) => ready.test(l.message)));

    // Every journalctl of the unit the host ran came from this tail (its backlog and the restart's reads up to
    // now) or from the host's one follow, which carries all three units: one reader, not one per listener.
    await tail.readNow();
    const commands = journalctlFor(demo, DECODE);
    const follows = commands.filter((c) => c.includes('--follow'));
    expect(commands.length - follows.length).toBe(tail.stats.reads);
    expect(
      commands.filter((c) => c.includes('--after-cursor') && !c.includes('--follow')).length,
    ).toBeGreaterThan(0);
    expect(follows.length).toBe(1);
    for (const unit of ['sglang-prefill.service', DECODE, 'sglang-router.service'])
      expect(follows[0]).toContain(`-u ${unit}`);
    // The other units have the recorder and the monitor listening to one tail: the host ran its backlog once, and
    // what readNow asks.
    const router = core.journalTail(id, 'sglang-router.service');
    await router.readNow();
    const routerReads = journalctlFor(demo, 'sglang-router.service').filter((c) => !c.includes('--follow'));
    expect(routerReads.length).toBe(router.stats.reads);
    expect(router.stats.reads).toBe(2);

    await dashboard.handlers().unfollowJournal({ followId });
    expect(tail.listeners).toBe(2);
    const sessionId = recording.status().active[0].sessionId!;
    await core.closeDeployment({ deploymentId: id });
    await recording.shutdown();
    const rec = await readRecording(recording.store.pathOf(sessionId));
    // The recorder heard the same lines: the restart's ready line is in the file.
    expect(rec.journal.some((j) => j.unit === DECODE && ready.test(j.message))).toBe(true);
  }, 120_000);

  describe('against the demo host', () => {
    let d: DemoCore | undefined;
    afterEach(async () => {
      await d?.stop();
      d = undefined;
    });

    for (const mode of ['polling', 'following'] as const)
      it(`${mode}: keeps a bounded backlog; a listener gets the backlog, then every new line, none lost or repeated, across a dropped link`, async () => {
        d = await openDemoCore({ seed: 7, intervalMs: 1000 });
        const conn = d.core.connectionOf(d.deploymentId);
        const follow =
          mode === 'following'
            ? new HostJournalFollow({
                label: conn.label,
                exec: (cmd, o) => conn.exec(cmd, o),
                open: (cmd, h) => conn.openStream(cmd, h),
                isConnected: () => conn.isConnected,
                clock: systemClock,
              })
            : undefined;
        const tail = new UnitJournalTail({
          unit: DECODE,
          exec: (cmd, o) => conn.exec(cmd, o),
          isConnected: () => conn.isConnected,
          clock: systemClock,
          backlogLines: 50,
          batchLines: 40,
          feed: follow,
        });
        const sim = d.demo.sim;
        const firstLive: JournalEntry[] = [];
        const first = tail.subscribe({ onLines: (l) => firstLive.push(...l) }, { intervalMs: 100 });
        const firstBacklog = await first.backlog;
        // The demo's decode has logged for 45 minutes: the backlog is the newest 50 entries only.
        expect(firstBacklog.length).toBe(50);
        for (let i = 1; i <= 3; i++) sim.log('decode', `tail-test marker ${i}`);
        await until('marker 3', () => firstLive.some((l) => l.message === 'tail-test marker 3'));

        const secondLive: JournalEntry[] = [];
        const second = tail.subscribe({ onLines: (l) => secondLive.push(...l) });
        const secondBacklog = await second.backlog;
        expect(secondBacklog.length).toBe(50);
        // The second listener's backlog ends where the first listener's stream stood when it joined.
        expect(secondBacklog.at(-1)!.cursor).toBe(firstLive.at(-1)!.cursor);

        // A burst larger than a batch, then more than the backlog holds.
        for (let i = 4; i <= 130; i++) sim.log('decode', `tail-test marker ${i}`);
        await until('marker 130 for both', () =>
          [firstLive, secondLive].every((s) => s.some((l) => l.message === 'tail-test marker 130')),
        );
        const stream = (lines: JournalEntry[]): string[] => lines.map((l) => l.cursor);
        const a = stream([...firstBacklog, ...firstLive]);
        const b = stream([...secondBacklog, ...secondLive]);
        // No cursor twice, and the second listener's whole view is the end of the first's.
        expect(new Set(a).size).toBe(a.length);
        expect(new Set(b).size).toBe(b.length);
        expect(a.slice(a.length - b.length)).toEqual(b);
        const markers = firstLive
          .filter((l) => l.message.startsWith('tail-test marker '))
          .map((l) => l.message);
        expect(markers).toEqual(Array.from({ length: 130 }, (_, i) => `tail-test marker ${i + 1}`));
        // Bounded: the tail keeps its newest 50 entries, whatever it has read.
        expect(tail.latest(10_000).length).toBe(50);
        expect(tail.latest(10_000).at(-1)!.message).toBe(secondLive.at(-1)!.message);

        // The link drops: lines logged while it is down arrive once it is back, once each (the cursor is kept).
        sim.dropConnections();
        for (let i = 131; i <= 140; i++) sim.log('decode', `tail-test marker ${i}`);
        await until(
          'marker 140 after the reconnect',
          () => firstLive.some((l) => l.message === 'tail-test marker 140'),
          45_000,
        );
        const all = firstLive.filter((l) => l.message.startsWith('tail-test marker ')).map((l) => l.message);
        expect(all).toEqual(Array.from({ length: 140 }, (_, i) => `tail-test marker ${i + 1}`));
        const everything = firstLive.map((l) => l.cursor);
        expect(new Set(everything).size).toBe(everything.length);
        if (follow) {
          // One follow before the drop and one after it, resumed after the last entry heard.
          expect(follow.stats.follows).toBe(2);
          expect(follow.stats.positionReads).toBe(1);
          // This tail's own follow (the app's monitor runs one of its own for every unit of the host).
          const resumed = d.demo.channels
            .execsSince()
            .map((e) => e.command)
            .filter((c) => c.includes('--follow') && !c.includes('-u sglang-router.service'));
          expect(resumed.length).toBe(2);
          expect(resumed[1]).toContain('--after-cursor');
        }

        // Nobody listens: the tail stops reading the host.
        first.dispose();
        second.dispose();
        expect(tail.listeners).toBe(0);
        const reads = tail.stats.reads;
        await new Promise((r) => setTimeout(r, 600));
        expect(tail.stats.reads).toBe(reads);
        if (follow) {
          expect(follow.units).toEqual([]);
          expect(follow.stats.follows).toBe(2);
        }
        tail.close();
        follow?.close();
      }, 60_000);
  });
});
