// A bad day in the demo is played one worker or one host at a time, for a chosen time: in the fleet a fault
// turned on for "decode-1" hits decode-1's unit only (it hit every decode worker when only a role could be named),
// "gpu-c" blackholes that host's path only, a duration ends the fault by itself on the demo's clock, and the
// faults that are on are reported by the names the operator used, with when each ends.
import { describe, expect, it } from 'vitest';
import { DemoSimulation, type NetworkEvent } from '../../src/main/demo/simulation';
import { fleetTopology, FLEET_HOSTS } from '../../src/main/demo/topology';
import { validateArgs } from '../../src/shared/schemas';
import { manualClock, T0 } from './helpers';

function fleetSim(): { sim: DemoSimulation; clock: ReturnType<typeof manualClock> } {
  const clock = manualClock();
  const addresses = Object.fromEntries(FLEET_HOSTS.map((h, i) => [h, `127.0.0.${2 + i}`])) as Record<
    (typeof FLEET_HOSTS)[number],
    string
  >;
  const sim = new DemoSimulation({
    clock,
    historyMs: 5 * 60_000,
    topology: fleetTopology({ addresses, dpRanks: 1, metricsDisabled: new Set() }),
  });
  return { sim, clock };
}

describe('demo faults per worker and host', () => {
  it('crash-loop for decode-1 crashes decode-1 only; the other decode workers stay up', () => {
    const { sim, clock } = fleetSim();
    sim.setFault('crash-loop', true, 'decode-1');
    const since = clock.now();
    clock.advance(60_000);
    // The world is advanced when something reads it.
    sim.advance();
    const crashed = new Set(
      sim.unitHistory
        .filter((t) => t.at >= since && t.activeState !== 'active' && t.role === 'decode')
        .map((t) => t.worker),
    );
    expect([...crashed]).toEqual(['decode-1']);
    expect(sim.faultStates()).toEqual([{ fault: 'crash-loop', target: 'decode-1', until: null }]);
  });

  it('a worker on two hosts is one target; a host names every unit on it', () => {
    const { sim } = fleetSim();
    sim.setFault('metrics-500', true, 'decode-2');
    expect(sim.isFaultOn('metrics-500', 'gpu-b/sglang-decode-2.service')).toBe(true);
    expect(sim.isFaultOn('metrics-500', 'gpu-c/sglang-decode-2.service')).toBe(true);
    expect(sim.isFaultOn('metrics-500', 'gpu-b/sglang-decode-1.service')).toBe(false);
    expect(sim.faultStates()).toEqual([{ fault: 'metrics-500', target: 'decode-2', until: null }]);
    sim.setFault('metrics-500', false);
    sim.setFault('health-never-ok', true, 'gpu-a');
    expect(sim.faultStates().map((f) => f.target)).toEqual(['prefill-0', 'prefill-1']);
    expect(() => sim.setFault('kv-full', true, 'prefill-0')).toThrow(/does not apply to prefill-0/);
    expect(() => sim.setFault('crash-loop', true, 'decode-7')).toThrow(
      /no host, role, worker or unit "decode-7"/,
    );
  });

  it('link-down for gpu-c for 30 s blackholes gpu-c alone and carries traffic again after 30 s of its clock', () => {
    const { sim, clock } = fleetSim();
    const events: Record<string, NetworkEvent[]> = { 'gpu-a': [], 'gpu-b': [], 'gpu-c': [] };
    for (const h of FLEET_HOSTS) sim.onNetwork((e) => events[h].push(e), h);
    sim.setFault('link-down', true, 'gpu-c', 30_000);
    expect(sim.faultStates()).toEqual([{ fault: 'link-down', target: 'gpu-c', until: clock.now() + 30_000 }]);
    expect(events['gpu-c']).toEqual([{ type: 'blackhole', on: true }]);
    clock.advance(29_000);
    expect(sim.isFaultOn('link-down', 'gpu-c')).toBe(true);
    clock.advance(1_000);
    expect(sim.isFaultOn('link-down', 'gpu-c')).toBe(false);
    expect(events['gpu-c']).toEqual([
      { type: 'blackhole', on: true },
      { type: 'blackhole', on: false },
    ]);
    expect(events['gpu-a']).toEqual([]);
    expect(events['gpu-b']).toEqual([]);
    expect(sim.faultStates()).toEqual([]);
  });

  it('turned on again or off by hand, an earlier duration no longer ends it; a stopped demo leaves no timer', () => {
    const { sim, clock } = fleetSim();
    sim.setFault('link-down', true, 'gpu-b', 30_000);
    // Until turned off now: the 30 s no longer apply.
    sim.setFault('link-down', true, 'gpu-b');
    clock.advance(40_000);
    expect(sim.faultStates()).toEqual([{ fault: 'link-down', target: 'gpu-b', until: null }]);
    // Off by hand, then on for 90 s: ends at 90 s, not at the first call's 30 s.
    sim.setFault('link-down', false, 'gpu-b');
    sim.setFault('link-down', true, 'gpu-b', 30_000);
    sim.setFault('link-down', true, 'gpu-b', 90_000);
    clock.advance(60_000);
    expect(sim.isFaultOn('link-down', 'gpu-b')).toBe(true);
    clock.advance(30_000);
    expect(sim.isFaultOn('link-down', 'gpu-b')).toBe(false);
    sim.setFault('crash-loop', true, 'decode-0', 10_000);
    sim.stopFaultTimers();
    clock.advance(20_000);
    // The timer was the demo's: once stopped, nothing turns it off behind the operator's back.
    expect(sim.isFaultOn('crash-loop')).toBe(true);
    expect(() => sim.setFault('crash-loop', false, 'decode-0', 5_000)).toThrow(
      /duration is for turning a fault on/,
    );
  });

  it('the single host names its units by role and its link by its host', () => {
    const clock = manualClock();
    const sim = new DemoSimulation({ clock, historyMs: 60_000 });
    sim.setFault('kv-full', true);
    sim.setFault('link-down', true, undefined, 90_000);
    expect(sim.faultStates()).toEqual([
      { fault: 'kv-full', target: 'decode', until: null },
      { fault: 'link-down', target: 'demo', until: T0 + 90_000 },
    ]);
  });

  it('the API names one target at most, a duration only to turn a fault on, within an hour', () => {
    const ok = { deploymentId: 'd', fault: 'link-down', on: true };
    expect(validateArgs('demoControl', { ...ok, host: 'gpu-b', forS: 90 })).toMatchObject({
      host: 'gpu-b',
      forS: 90,
    });
    expect(validateArgs('demoControl', { ...ok, fault: 'crash-loop', worker: 'decode-1' })).toMatchObject({
      worker: 'decode-1',
    });
    expect(() => validateArgs('demoControl', { ...ok, role: 'decode', host: 'gpu-b' })).toThrow(
      /at most one/,
    );
    expect(() => validateArgs('demoControl', { ...ok, on: false, forS: 30 })).toThrow(/forS/);
    expect(() => validateArgs('demoControl', { ...ok, forS: 3601 })).toThrow(/forS/);
    expect(() => validateArgs('demoControl', { ...ok, worker: '../decode' })).toThrow(/worker/);
  });
});
