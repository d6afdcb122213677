// The NetworkWatcher reports sleep/resume and network changes (the moments SSH links silently die), driven here
// with a scripted clock and interface list so each case is exact.
import type os from 'node:os';
import { describe, expect, it } from 'vitest';
import { NetworkWatcher, type NetworkChange } from '../../src/main/core/ssh/network-watcher';

function rig() {
  let wall = 1_000_000;
  let mono = 5_000;
  let ifaces: Record<string, Array<Pick<os.NetworkInterfaceInfo, 'address' | 'internal'>>> = {
    lo: [{ address: '127.0.0.1', internal: true }],
    eth0: [{ address: '192.168.1.20', internal: false }],
  };
  const watcher = new NetworkWatcher({
    intervalMs: 3000,
    resumeThresholdMs: 10_000,
    minSpacingMs: 2000,
    interfaces: () => ifaces as NodeJS.Dict<os.NetworkInterfaceInfo[]>,
    wallNow: () => wall,
    monoNow: () => mono,
  });
  const events: NetworkChange[] = [];
  watcher.on('change', (c) => events.push(c));
  return {
    watcher,
    events,
    tick(wallMs: number, monoMs = wallMs) {
      wall += wallMs;
      mono += monoMs;
      watcher.check();
    },
    setIfaces(next: typeof ifaces) {
      ifaces = next;
    },
  };
}

describe('NetworkWatcher', () => {
  it('stays quiet while nothing changes', () => {
    const r = rig();
    for (let i = 0; i < 10; i++) r.tick(3000);
    expect(r.events).toEqual([]);
  });

  it('reports addresses that appear or vanish (VPN up, Wi-Fi switch), ignoring loopback', () => {
    const r = rig();
    r.setIfaces({
      lo: [{ address: '127.0.0.1', internal: true }],
      eth0: [{ address: '192.168.1.20', internal: false }],
      tun0: [{ address: '10.8.0.2', internal: false }],
    });
    r.tick(3000);
    expect(r.events).toEqual([
      expect.objectContaining({ kind: 'network', reason: 'network changed: +10.8.0.2 (tun0)' }),
    ]);
    r.setIfaces({
      lo: [{ address: '127.0.0.1', internal: true }],
      wlan0: [{ address: '172.20.0.9', internal: false }],
    });
    r.tick(3000);
    expect(r.events[1].reason).toBe(
      'network changed: +172.20.0.9 (wlan0), -192.168.1.20 (eth0), -10.8.0.2 (tun0)',
    );
  });

  it('detects a sleep: the wall clock ran on while the monotonic clock stood still', () => {
    const r = rig();
    r.tick(3000);
    r.tick(340_000, 3000);
    expect(r.events).toEqual([
      expect.objectContaining({ kind: 'resume', reason: 'system resumed after ~340 s' }),
    ]);
    // A slightly late poll is not a sleep.
    r.tick(6000);
    expect(r.events).toHaveLength(1);
  });

  it('reports a burst of changes once, then the latest state when it settles', () => {
    const r = rig();
    r.setIfaces({ eth0: [] });
    r.tick(1000);
    r.setIfaces({ eth0: [{ address: '192.168.1.21', internal: false }] });
    r.tick(500);
    expect(r.events.map((e) => e.reason)).toEqual(['network changed: -192.168.1.20 (eth0)']);
    r.tick(3000);
    expect(r.events.map((e) => e.reason)).toEqual([
      'network changed: -192.168.1.20 (eth0)',
      'network changed: +192.168.1.21 (eth0)',
    ]);
  });

  it('takes OS signals from the shell (Electron powerMonitor) through notify()', () => {
    const r = rig();
    r.watcher.notify('resume', 'powerMonitor: resume');
    expect(r.events).toEqual([expect.objectContaining({ kind: 'resume', reason: 'powerMonitor: resume' })]);
  });

  it('polls on its own once started, and stops', async () => {
    const w = new NetworkWatcher({ intervalMs: 20, interfaces: () => ({}) });
    let checks = 0;
    const original = w.check.bind(w);
    w.check = () => {
      checks++;
      original();
    };
    w.start();
    await new Promise((r) => setTimeout(r, 120));
    w.stop();
    const seen = checks;
    await new Promise((r) => setTimeout(r, 60));
    expect(seen).toBeGreaterThanOrEqual(2);
    expect(checks).toBe(seen);
  });
});
