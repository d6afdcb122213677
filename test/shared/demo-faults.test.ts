// The demo's fault switch is reached from the API with a name; the names the palette and scripts may send
// must be exactly the ones the simulation implements, so an unknown one is refused at the boundary.
import { describe, expect, it } from 'vitest';
import { validateArgs } from '../../src/shared/schemas';
import { DemoSimulation } from '../../src/main/demo';
import { DEMO_FAULT_NAMES } from '../../src/shared/demo-faults';
import { manualClock } from '../demo/helpers';

describe('demo fault names', () => {
  it('every listed fault can be switched on and off in the simulation', () => {
    const sim = new DemoSimulation({ clock: manualClock(), historyMs: 60_000 });
    for (const name of DEMO_FAULT_NAMES) {
      sim.setFault(name, true);
      expect(sim.isFaultOn(name)).toBe(true);
      sim.setFault(name, false);
      expect(sim.isFaultOn(name)).toBe(false);
    }
  });

  it('the API refuses a fault the demo does not implement (the old list named five that never existed)', () => {
    for (const stale of ['metrics-disabled', 'metrics-stale', 'transfer-failures'])
      expect(() => validateArgs('demoControl', { deploymentId: 'demo', fault: stale, on: true })).toThrow(
        /invalid arguments for demoControl: fault/,
      );
    expect(validateArgs('demoControl', { deploymentId: 'demo', fault: 'kv-full', on: true })).toMatchObject({
      fault: 'kv-full',
    });
  });
});
