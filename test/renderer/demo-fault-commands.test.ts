// The palette's demo faults: in a fleet each fault is offered per worker ("Demo: crash-loop decode-1", sent as
// that worker — the palette used to send the role, so every decode worker crashed at once) and the link per host
// (a multi-node worker's second host included) for 30 s, 90 s or until turned off; a fault that is on offers its
// way back (the link with when it comes back by itself); the single host is named by role.
import { describe, expect, it } from 'vitest';
import { demoFaultCommands } from '../../src/renderer/src/demo/fault-commands';
import { formatClock } from '../../src/renderer/src/format';
import type { DeploymentConfig, ServiceConfig } from '../../src/shared/domain';

const svc = (s: Partial<ServiceConfig> & Pick<ServiceConfig, 'role' | 'hostId'>): ServiceConfig => ({
  unit: `sglang-${s.id ?? s.role}.service`,
  apiUrl: 'http://127.0.0.1:1',
  ...s,
});

const fleet: DeploymentConfig = {
  id: 'gpu-a',
  name: 'Demo fleet',
  services: [
    svc({ id: 'router', role: 'router', hostId: 'gpu-a' }),
    svc({ id: 'prefill-0', role: 'prefill', hostId: 'gpu-a' }),
    svc({ id: 'decode-0', role: 'decode', hostId: 'gpu-b' }),
    svc({ id: 'decode-1', role: 'decode', hostId: 'gpu-b' }),
    svc({
      id: 'decode-2',
      role: 'decode',
      hostId: 'gpu-b',
      units: [
        { hostId: 'gpu-b', unit: 'sglang-decode-2.service', nodeRank: 0 },
        { hostId: 'gpu-c', unit: 'sglang-decode-2.service', nodeRank: 1 },
      ],
    }),
  ],
};

const single: DeploymentConfig = {
  id: 'demo',
  name: 'Demo',
  services: [
    svc({ role: 'prefill', hostId: 'demo' }),
    svc({ role: 'decode', hostId: 'demo' }),
    svc({ role: 'router', hostId: 'demo' }),
  ],
};

const byId = (cmds: ReturnType<typeof demoFaultCommands>, id: string) => {
  const c = cmds.find((x) => x.id === id);
  if (!c) throw new Error(`no command ${id} among ${cmds.map((x) => x.id).join(', ')}`);
  return c;
};

describe('demo fault commands', () => {
  it('a fleet: each fault per worker, sent as that worker; the link per host for a chosen time', () => {
    const cmds = demoFaultCommands(fleet, true, []);
    const crash = byId(cmds, 'demo-crash-loop-on-decode-1');
    expect(crash.title).toMatch(/^Demo: crash-loop decode-1 /);
    expect(crash.requests).toEqual([{ fault: 'crash-loop', on: true, worker: 'decode-1' }]);
    expect(byId(cmds, 'demo-crash-loop-on-router').requests).toEqual([
      { fault: 'crash-loop', on: true, role: 'router' },
    ]);
    // kv-full is decode's only; router-never-readds is the servers'.
    expect(cmds.some((c) => c.id === 'demo-kv-full-on-prefill-0')).toBe(false);
    expect(cmds.some((c) => c.id === 'demo-router-never-readds-on-router')).toBe(false);
    for (const f of ['metrics-500', 'metrics-hang', 'health-never-ok', 'router-never-readds', 'kv-full'])
      expect(byId(cmds, `demo-${f}-on-decode-2`).requests).toEqual([
        { fault: f, on: true, worker: 'decode-2' },
      ]);
    for (const h of ['gpu-a', 'gpu-b', 'gpu-c']) {
      expect(byId(cmds, `demo-link-down-${h}-30`).requests).toEqual([
        { fault: 'link-down', on: true, host: h, forS: 30 },
      ]);
      expect(byId(cmds, `demo-link-down-${h}-90`).title).toBe(
        `Demo: drop the link to ${h} for 90 s (its SSH server stops answering)`,
      );
      expect(byId(cmds, `demo-link-down-${h}-until-off`).requests).toEqual([
        { fault: 'link-down', on: true, host: h },
      ]);
    }
    expect(cmds.some((c) => c.id === 'demo-end-all')).toBe(false);
  });

  it('a fault that is on offers its way back; the link says when it comes back by itself', () => {
    const until = Date.UTC(2026, 10, 29, 9, 30, 0);
    const cmds = demoFaultCommands(fleet, true, [
      { fault: 'crash-loop', target: 'decode-1', until: null },
      { fault: 'link-down', target: 'gpu-c', until },
    ]);
    expect(cmds.some((c) => c.id === 'demo-crash-loop-on-decode-1')).toBe(false);
    const off = byId(cmds, 'demo-crash-loop-off-decode-1');
    expect(off.title).toBe('Demo: end the crash loop of decode-1');
    expect(off.requests).toEqual([{ fault: 'crash-loop', on: false, worker: 'decode-1' }]);
    // decode-0 is still offered its own.
    byId(cmds, 'demo-crash-loop-on-decode-0');
    const up = byId(cmds, 'demo-link-up-gpu-c');
    expect(up.title).toBe(`Demo: bring the link to gpu-c back now (down until ${formatClock(until)})`);
    expect(cmds.some((c) => c.id.startsWith('demo-link-down-gpu-c'))).toBe(false);
    byId(cmds, 'demo-link-down-gpu-b-30');
    const all = byId(cmds, 'demo-end-all');
    expect(all.title).toBe('Demo: end every simulated fault (2 on: crash-loop, link-down)');
    expect(all.requests).toEqual([
      { fault: 'crash-loop', on: false, worker: 'decode-1' },
      { fault: 'link-down', on: false, host: 'gpu-c' },
    ]);
  });

  it('the single host: by role, its one link without a host', () => {
    const cmds = demoFaultCommands(single, false, []);
    expect(byId(cmds, 'demo-crash-loop-on-decode').requests).toEqual([
      { fault: 'crash-loop', on: true, role: 'decode' },
    ]);
    expect(byId(cmds, 'demo-link-down-host-30').requests).toEqual([
      { fault: 'link-down', on: true, forS: 30 },
    ]);
    expect(byId(cmds, 'demo-link-down-host-30').title).toBe(
      'Demo: drop the link to the demo host for 30 s (its SSH server stops answering)',
    );
    const on = demoFaultCommands(single, false, [
      { fault: 'link-down', target: 'demo', until: null },
      { fault: 'metrics-hang', target: 'decode', until: null },
    ]);
    expect(byId(on, 'demo-link-up-host').title).toBe(
      'Demo: bring the link to the demo host back now (down until turned off)',
    );
    expect(byId(on, 'demo-end-all').requests).toEqual([
      { fault: 'link-down', on: false },
      { fault: 'metrics-hang', on: false, role: 'decode' },
    ]);
  });
});
