// A running roll speaks through the buttons of what it restarts only: during a decode roll the decode group's
// button says "Restarting decode-1…", the prefill group's does not (it read "Restarting decode-1…" too).
import { describe, expect, it } from 'vitest';
import type { RollOperation } from '../../src/shared/contract';
import { rollCovers } from '../../src/renderer/src/restart/roll-scope';

const worker = (workerId: string, name: string, role: 'prefill' | 'decode' | 'router') =>
  ({ workerId, name, role, state: 'pending', steps: [] }) as RollOperation['workers'][number];

describe('rollCovers', () => {
  const decodeRoll = {
    workers: [
      worker('http://10.1.0.13:30200', 'decode-0', 'decode'),
      worker('http://10.1.0.13:30201', 'decode-1', 'decode'),
    ],
  };
  it('a role roll covers its role’s button, not the other role’s', () => {
    expect(rollCovers(decodeRoll, { kind: 'role', role: 'decode' })).toBe(true);
    expect(rollCovers(decodeRoll, { kind: 'role', role: 'prefill' })).toBe(false);
    expect(rollCovers(decodeRoll, { kind: 'deployment' })).toBe(true);
  });
  it('a worker’s button by its URL; a router’s by its unit (the roll names it host/unit)', () => {
    expect(rollCovers(decodeRoll, { kind: 'worker', worker: 'http://10.1.0.13:30201' })).toBe(true);
    expect(rollCovers(decodeRoll, { kind: 'worker', worker: 'http://10.1.0.11:30100' })).toBe(false);
    const routerRoll = { workers: [worker('gpu-a/sglang-router.service', 'router', 'router')] };
    expect(rollCovers(routerRoll, { kind: 'worker', worker: 'sglang-router.service' })).toBe(true);
    expect(rollCovers(routerRoll, { kind: 'worker', worker: 'sglang-decode-0.service' })).toBe(false);
  });
});
