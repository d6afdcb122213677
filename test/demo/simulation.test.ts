// The simulated world on a manual clock: restart semantics, the load model, the router's view, and every
// fault that is not about HTTP or command output.
import { describe, expect, it } from 'vitest';
import { DemoSimulation, emulateCommand } from '../../src/main/demo';
import { parseExposition } from '../../src/main/core/probes/exposition/parser';
import { renderServerMetrics } from '../../src/main/demo/sglang-metrics';
import { renderRouterMetrics } from '../../src/main/demo/router-metrics';
import { manualClock, parseShow, T0 } from './helpers';

function world(extra: Partial<ConstructorParameters<typeof DemoSimulation>[0]> = {}) {
  const clock = manualClock(T0);
  const sim = new DemoSimulation({ clock, historyMs: 5 * 60_000, ...extra });
  return { clock, sim };
}

function samples(text: string, name: string): number[] {
  return parseExposition(text, 'prometheus')
    .families.flatMap((f) => f.samples)
    .filter((s) => s.name === name)
    .map((s) => s.value);
}

function decodeMetrics(sim: DemoSimulation): string {
  const p = sim.units.decode.server;
  if (!p) throw new Error('decode is down');
  return renderServerMetrics(p, sim.era, sim.dpRanks);
}

/** Steps the clock in `step` increments, recording the decode unit's distinct states. */
function watch(sim: DemoSimulation, clock: ReturnType<typeof manualClock>, ms: number, step = 500): string[] {
  const seen: string[] = [];
  for (let t = 0; t < ms; t += step) {
    clock.advance(step);
    const u = sim.snapshot().units.decode;
    const s = `${u.activeState}/${u.subState}`;
    if (seen[seen.length - 1] !== s) seen.push(s);
  }
  return seen;
}

describe('steady state', () => {
  it('starts with all three units active, healthy and serving traffic', () => {
    const { sim } = world();
    const s = sim.snapshot();
    for (const r of ['prefill', 'decode', 'router'] as const)
      expect(s.units[r]).toMatchObject({ activeState: 'active', subState: 'running', healthy: true });
    expect(s.router.ready).toBe(true);
    expect(s.kv.decode?.capacity).toBe(2_580_000);
    expect(s.kv.prefill?.capacity).toBe(447_416);
    expect(s.kv.decode?.used).toBeGreaterThan(0);
    expect(s.counters.decode?.numRequests).toBeGreaterThan(100);
  });

  it('is deterministic for a seed and different across seeds', () => {
    const a = world({ seed: 7, historyMs: 3 * 60_000 }).sim.snapshot();
    const b = world({ seed: 7, historyMs: 3 * 60_000 }).sim.snapshot();
    const c = world({ seed: 8, historyMs: 3 * 60_000 }).sim.snapshot();
    expect(b.kv.decode).toEqual(a.kv.decode);
    expect(b.units.decode.mainPid).toBe(a.units.decode.mainPid);
    expect(c.kv.decode?.used).not.toBe(a.kv.decode?.used);
  });

  it('KV usage rises and falls with the load waves, counters only grow', () => {
    const { sim, clock } = world();
    const ratios: number[] = [];
    let lastGen = 0;
    let lastReq = 0;
    for (let i = 0; i < 60; i++) {
      clock.advance(30_000);
      const s = sim.snapshot();
      ratios.push(s.kv.decode?.ratio ?? 0);
      const c = s.counters.decode;
      expect(c?.generationTokens).toBeGreaterThanOrEqual(lastGen);
      expect(c?.numRequests).toBeGreaterThanOrEqual(lastReq);
      lastGen = c?.generationTokens ?? 0;
      lastReq = c?.numRequests ?? 0;
      const kv = s.kv.decode;
      if (kv) expect(kv.used + kv.evictable + kv.available).toBe(kv.capacity);
    }
    expect(Math.max(...ratios) - Math.min(...ratios)).toBeGreaterThan(0.2);
    expect(Math.max(...ratios)).toBeLessThanOrEqual(1);
  });

  it('the exposition agrees with the snapshot (ground truth)', () => {
    const { sim } = world();
    const s = sim.snapshot();
    const text = decodeMetrics(sim);
    expect(samples(text, 'sglang:kv_used_tokens')).toEqual([s.kv.decode?.used]);
    expect(samples(text, 'sglang:max_total_num_tokens')).toEqual([2_580_000]);
    expect(samples(text, 'sglang:num_requests_total')).toEqual([s.counters.decode?.numRequests]);
    expect(samples(text, 'sglang:e2e_request_latency_seconds_count')).toEqual([s.counters.decode?.e2eCount]);
  });
});

describe('restart', () => {
  it('goes deactivating → active at once (Type=simple), with a new PID, NRestarts unchanged and fresh counters', () => {
    const { sim, clock } = world();
    const before = sim.snapshot();
    const oldPid = before.units.decode.mainPid;
    const oldRequests = before.counters.decode?.numRequests ?? 0;
    sim.restartUnit('decode');
    expect(sim.snapshot().units.decode).toMatchObject({
      activeState: 'deactivating',
      subState: 'stop-sigterm',
      listening: false,
    });
    const states = watch(sim, clock, 120_000);
    // systemd calls a Type=simple unit started the moment its process runs, long before the model is loaded.
    expect(states).toEqual(['deactivating/stop-sigterm', 'active/running']);
    const after = sim.snapshot();
    expect(after.units.decode.mainPid).not.toBe(oldPid);
    expect(after.units.decode.nRestarts).toBe(0);
    expect(after.units.decode.activeEnterTimestamp).toBeGreaterThan(T0);
    expect(after.counters.decode?.numRequests).toBeLessThan(oldRequests);
  });

  // 90 s is the default (a 32B model); --demo-model-load makes it shorter, down to 20 s, in the same order.
  it.each([
    ['the default load', undefined, 90_000],
    ['a 30 s load', 30_000, 30_000],
    ['the shortest load', 20_000, 20_000],
  ])(
    'writes the load sequence to the journal and reports /health 503 or refused until ready: %s',
    (_, modelLoadMs, loadMs) => {
      const { sim, clock } = world({ modelLoadMs });
      const seq0 = sim.journal.lastSeq;
      sim.restartUnit('decode');
      const health: string[] = [];
      let readyAfter = NaN;
      for (let t = 1000; t < 110_000; t += 1000) {
        clock.advance(1000);
        const h = sim.serverHealth('decode');
        if (h === 'ok' && Number.isNaN(readyAfter)) readyAfter = t;
        if (health[health.length - 1] !== h) health.push(h);
      }
      expect(health).toEqual(['refused', 'starting', 'ok']);
      // The stop first (a few seconds), then the load ±8 %; a short load's fixed steps add a few seconds more.
      expect(readyAfter).toBeGreaterThanOrEqual(loadMs * 0.92);
      expect(readyAfter).toBeLessThanOrEqual(loadMs * 1.08 + 10_000);
      const msgs = sim.journal
        .query({ units: ['sglang-decode.service'], afterSeq: seq0 })
        .map((e) => e.message);
      const idx = (re: RegExp): number => msgs.findIndex((m) => re.test(m));
      // systemd 252's own lines for a Type=simple restart: no "Starting…", "Started" at once; then SGLang's load,
      // the shard bar one "\r"-led line per redraw (its format ends in a newline), the CUDA-graph bar one line.
      const order = [
        /^Stopping sglang-decode\.service - SGLang decode \(PD\)\.\.\.$/,
        /^sglang-decode\.service: Deactivated successfully\.$/,
        /^Stopped sglang-decode\.service - SGLang decode \(PD\)\.$/,
        /^sglang-decode\.service: Consumed (\d+h )?(\d+min )?\d+\.\d{3}s CPU time\.$/,
        /^Started sglang-decode\.service - SGLang decode \(PD\)\.$/,
        /^\rLoading safetensors checkpoint shards: {3}0% Completed \| 0\/17 \[00:00<\?, \?it\/s\]$/,
        // tqdm gives s/it below one shard a second, it/s above.
        /^\rLoading safetensors checkpoint shards: {2}24% Completed \| 4\/17 \[00:\d\d<00:\d\d, +\d\.\d\d(s\/it|it\/s)\]$/,
        /^\rLoading safetensors checkpoint shards: 100% Completed \| 17\/17/,
        /KV Cache is allocated\. #tokens: 2580000/,
        /Capture cuda graph begin/,
        /^\r {2}0%\| {10}\| 0\/20 \[00:00<\?, \?it\/s\]\rCapturing batches \(bs=256 avail_mem=7\.90 GB\)[^]*\| 20\/20 \[[^\r]*\]$/,
        /Capture cuda graph end/,
        /Uvicorn running on http:\/\/127\.0\.0\.1:30200/,
        /The server is fired up and ready to roll!/,
      ].map(idx);
      expect(order).not.toContain(-1);
      expect([...order].sort((a, b) => a - b)).toEqual(order);
      expect(msgs.filter((m) => m.startsWith('Starting '))).toEqual([]);
    },
  );

  it('resets KV and counters: the new process starts from zero and fills up again', () => {
    const { sim, clock } = world();
    sim.restartUnit('decode');
    clock.advance(100_000);
    const fresh = sim.snapshot();
    expect(fresh.kv.decode?.used ?? 0).toBeLessThan(200_000);
    clock.advance(120_000);
    expect(sim.snapshot().kv.decode?.used).toBeGreaterThan(fresh.kv.decode?.used ?? 0);
  });

  it('the router marks the worker unhealthy within its check interval and healthy again once it is up', () => {
    const { sim, clock } = world();
    sim.restartUnit('decode');
    const health: number[] = [];
    const ready: boolean[] = [];
    for (let t = 0; t < 150_000; t += 2000) {
      clock.advance(2000);
      const r = sim.units.router.router;
      if (!r) throw new Error('router down');
      const v = samples(renderRouterMetrics(r, 'smg-1.5'), 'smg_worker_health');
      const decode = v[1];
      if (health[health.length - 1] !== decode) health.push(decode);
      ready.push(sim.snapshot().router.ready);
    }
    expect(health).toEqual([1, 0, 1]);
    expect(ready).toContain(false);
    expect(ready[ready.length - 1]).toBe(true);
  });

  it('zeroes NRestarts on the start after a stop, as systemd does; a restart while one waits keeps the count', async () => {
    const { sim, clock } = world();
    const nRestarts = async (): Promise<string> =>
      parseShow((await emulateCommand(sim, 'systemctl show sglang-decode -p NRestarts', 'root')).stdout)[0]
        .NRestarts;
    // A crash loop that ended: the server came up and serves, with the count of its automatic restarts.
    sim.setFault('crash-loop', true, 'decode');
    while (sim.units.decode.nRestarts < 2) clock.advance(2000);
    sim.setFault('crash-loop', false, 'decode');
    while (!sim.snapshot().units.decode.healthy) clock.advance(2000);
    expect(await nRestarts()).toBe('2');
    // The operator's restart: the count stays readable while the unit stops, the new start zeroes it.
    sim.restartUnit('decode');
    expect(await nRestarts()).toBe('2');
    expect(watch(sim, clock, 30_000)).toEqual(['deactivating/stop-sigterm', 'active/running']);
    expect(await nRestarts()).toBe('0');
    // A restart issued while an automatic restart waits belongs to that run of restarts: the count goes on.
    sim.setFault('crash-loop', true, 'decode');
    while (sim.units.decode.nRestarts < 1 || sim.units.decode.subState !== 'auto-restart') clock.advance(500);
    expect(await nRestarts()).toBe('1');
    sim.restartUnit('decode');
    expect(sim.units.decode.activeState).toBe('active');
    expect(await nRestarts()).toBe('1');
  });

  it('a manual stop leaves the unit inactive with MainPID 0; start brings it back', async () => {
    const { sim, clock } = world();
    sim.stopUnit('prefill');
    clock.advance(10_000);
    let show = parseShow(
      (
        await emulateCommand(
          sim,
          'systemctl show sglang-prefill -p ActiveState,SubState,MainPID,Result',
          'root',
        )
      ).stdout,
    )[0];
    expect(show).toEqual({ MainPID: '0', Result: 'success', ActiveState: 'inactive', SubState: 'dead' });
    sim.startUnit('prefill');
    clock.advance(90_000);
    show = parseShow(
      (await emulateCommand(sim, 'systemctl show sglang-prefill -p ActiveState,MainPID', 'root')).stdout,
    )[0];
    expect(show.ActiveState).toBe('active');
    expect(Number(show.MainPID)).toBeGreaterThan(0);
  });
});

describe('faults', () => {
  it('unit-fails-to-start: active while loading → failed, Result=exit-code, ExecMainStatus=1, traceback in the journal, no retry', async () => {
    const { sim, clock } = world();
    sim.setFault('unit-fails-to-start', true, 'decode');
    sim.restartUnit('decode');
    clock.advance(120_000);
    const show = parseShow(
      (
        await emulateCommand(
          sim,
          'systemctl show sglang-decode.service -p ActiveState,SubState,Result,ExecMainStatus,ExecMainCode,NRestarts,MainPID',
          'operator',
        )
      ).stdout,
    )[0];
    expect(show).toMatchObject({
      ActiveState: 'failed',
      SubState: 'failed',
      Result: 'exit-code',
      ExecMainStatus: '1',
      ExecMainCode: '1',
      MainPID: '0',
      NRestarts: '0',
    });
    const log = (await emulateCommand(sim, 'journalctl -u sglang-decode.service -n 40 -o cat', 'operator'))
      .stdout;
    expect(log).toMatch(/Traceback \(most recent call last\)/);
    expect(log).toMatch(/RuntimeError: Not enough memory/);
    // The start job ended with "Started" long before: systemd 252 says nothing of a failed start here.
    expect(log).toMatch(
      /^sglang-decode\.service: Main process exited, code=exited, status=1\/FAILURE\nsglang-decode\.service: Failed with result 'exit-code'\.\n/m,
    );
    expect(log).not.toMatch(/Failed to start/);
    clock.advance(60_000);
    expect(sim.snapshot().units.decode.activeState).toBe('failed');
  });

  it('start-timeout: the load hangs in NCCL while the Type=simple unit stays active/running; nothing times out in systemd', () => {
    const { sim, clock } = world();
    sim.setFault('start-timeout', true, 'prefill');
    sim.restartUnit('prefill');
    clock.advance(40 * 60_000);
    expect(sim.snapshot().units.prefill).toMatchObject({
      activeState: 'active',
      subState: 'running',
      listening: false,
      nRestarts: 0,
    });
    expect(sim.serverHealth('prefill')).toBe('refused');
    const msgs = sim.journal.query({ units: ['sglang-prefill.service'], lines: 5 }).map((e) => e.message);
    expect(msgs.at(-1)).toMatch(/Init torch distributed begin\.$/);
  });

  it('health-never-ok: the unit is active but /health stays 503 and the router drops the worker', () => {
    const { sim, clock } = world();
    sim.setFault('health-never-ok', true, 'decode');
    clock.advance(60_000);
    const s = sim.snapshot();
    expect(s.units.decode.activeState).toBe('active');
    expect(sim.serverHealth('decode')).toBe('starting');
    expect(s.router.workers.find((w) => w.role === 'decode')?.health).toBe('unhealthy');
    expect(s.router.ready).toBe(false);
    sim.setFault('health-never-ok', false);
    clock.advance(40_000);
    expect(sim.snapshot().router.ready).toBe(true);
  });

  it('router-never-readds: after a restart the worker stays unhealthy in the router until the fault clears', () => {
    const { sim, clock } = world();
    sim.setFault('router-never-readds', true, 'prefill');
    sim.restartUnit('prefill');
    clock.advance(150_000);
    const s = sim.snapshot();
    expect(s.units.prefill.healthy).toBe(true);
    expect(s.router.workers.find((w) => w.role === 'prefill')?.health).toBe('unhealthy');
    sim.setFault('router-never-readds', false);
    clock.advance(30_000);
    expect(sim.snapshot().router.workers.find((w) => w.role === 'prefill')?.health).toBe('healthy');
  });

  it('crash-loop: the process keeps dying by SIGKILL and systemd keeps restarting it (NRestarts rises)', () => {
    const { sim, clock } = world();
    sim.setFault('crash-loop', true, 'decode');
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      clock.advance(2000);
      const u = sim.units.decode;
      seen.add(`${u.activeState}/${u.subState}`);
    }
    expect(sim.units.decode.nRestarts).toBeGreaterThanOrEqual(2);
    expect(seen).toContain('activating/auto-restart');
    expect(sim.units.decode.result === 'signal' || sim.units.decode.activeState !== 'failed').toBe(true);
    const msgs = sim.journal.query({ units: ['sglang-decode.service'] }).map((e) => e.message);
    expect(msgs).toContain('sglang-decode.service: Main process exited, code=killed, status=9/KILL');
    expect(msgs.some((m) => /Scheduled restart job, restart counter is at 2\./.test(m))).toBe(true);
    // PID 1's lines of one cycle, as systemd 252 writes them: the CPU used is logged when the process dies and
    // again when the restart job's stop half ends.
    const pid1 = sim.journal
      .query({ units: ['sglang-decode.service'] })
      .filter((e) => e.fromSystemd)
      // Past ten minutes of CPU the line is a notice (5), else info (6).
      .map((e) =>
        `${e.priority} ${e.message}`.replace(/^[56] (.*): Consumed .* CPU time/, 'N $1: Consumed X CPU time'),
      );
    const crash = pid1.indexOf('4 sglang-decode.service: Main process exited, code=killed, status=9/KILL');
    expect(pid1.slice(crash, crash + 6)).toEqual([
      '4 sglang-decode.service: Main process exited, code=killed, status=9/KILL',
      "4 sglang-decode.service: Failed with result 'signal'.",
      'N sglang-decode.service: Consumed X CPU time.',
      '6 sglang-decode.service: Scheduled restart job, restart counter is at 1.',
      '6 Stopped sglang-decode.service - SGLang decode (PD).',
      'N sglang-decode.service: Consumed X CPU time.',
    ]);
    expect(pid1[crash + 6]).toBe('6 Started sglang-decode.service - SGLang decode (PD).');
  });

  it('kv-full: decode KV is pinned at 97–100 % and the PD queues grow', () => {
    const { sim, clock } = world();
    sim.setFault('kv-full', true);
    clock.advance(8 * 60_000);
    const ratios: number[] = [];
    const queues: number[] = [];
    for (let i = 0; i < 10; i++) {
      clock.advance(20_000);
      const s = sim.snapshot();
      ratios.push(s.kv.decode?.ratio ?? 0);
      queues.push((s.queues.decode?.prealloc ?? 0) + (s.queues.prefill?.bootstrap ?? 0));
    }
    expect(Math.min(...ratios)).toBeGreaterThanOrEqual(0.97);
    expect(Math.max(...ratios)).toBeLessThanOrEqual(1);
    expect(queues[queues.length - 1]).toBeGreaterThan(20);
  });

  it('reboot: every unit restarts with a new boot ID and NRestarts 0; the host is down meanwhile', () => {
    const { sim, clock } = world();
    const boot = sim.bootId;
    const pid = sim.units.decode.mainPid;
    sim.reboot(30_000);
    expect(sim.isDown).toBe(true);
    expect(sim.portOpen(30200)).toBe(false);
    clock.advance(31_000);
    expect(sim.isDown).toBe(false);
    expect(sim.bootId).not.toBe(boot);
    clock.advance(200_000);
    const s = sim.snapshot();
    for (const r of ['prefill', 'decode', 'router'] as const) expect(s.units[r].activeState).toBe('active');
    expect(s.units.decode.mainPid).not.toBe(pid);
    expect(s.router.ready).toBe(true);
  });

  it('rejects unknown faults and roles a fault cannot apply to', () => {
    const { sim } = world();
    expect(() => sim.setFault('nope' as never, true)).toThrow(/unknown demo fault/);
    expect(() => sim.setFault('kv-full', true, 'router')).toThrow(/does not apply to router/);
  });
});
