// Issue 15 "done when", on the demo fleet (three simulated hosts on 127.0.0.2/.3/.4, each its own SSH server
// with its own host key, reached through the app's real SSH client and the ssh config the fleet writes):
// `pd-console status --host gpu-a --json` follows the router to gpu-b (and gpu-c, added by hand for decode-2's
// node rank 1) and gives each worker's exact KV as the simulation's ground truth has it; with gpu-b's alias
// left out of the ssh config, the decode workers are unplaced with the Host/HostName lines to add.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliCaptured } from './run-on-app';
import { systemClock, type Clock } from '../../src/main/core/clock';
import { startDemoFleet, type DemoFleet } from '../../src/main/demo/fleet';

/** Simulated time stands still, so what status reads and the ground truth read afterwards are the same instant. */
function frozenClock(at: number): Clock {
  return {
    now: () => at,
    setTimeout: (fn, ms) => systemClock.setTimeout(fn, ms),
    clearTimeout: (t) => systemClock.clearTimeout(t),
  };
}

interface Service {
  role: string;
  host: string;
  unit: string | null;
  units?: { host: string; unit: string; nodeRank: number; activeState: string | null }[];
  url: string;
  activeState: string | null;
  health: string | null;
  kv?: { usedTokens: number; capacityTokens: number; ratio: number | null };
  condition: { kind: string };
  signals: Record<string, number | null>;
  scrapes: { count: number };
}

describe('pd-console status on the demo fleet', () => {
  let fleet: DemoFleet;
  let dir: string;
  let home: string;
  let homeNoB: string;
  let configNoB: string;
  const cli = (args: string[], sshHome: string) => cliCaptured(args, { sshHome });

  beforeAll(async () => {
    fleet = await startDemoFleet({ clock: frozenClock(Date.now()) });
    dir = mkdtempSync(join(tmpdir(), 'pd-cli-demo-fleet-'));
    home = (await fleet.writeSshConfig(join(dir, 'all'))).home;
    const noB = await fleet.writeSshConfig(join(dir, 'no-b'), { omit: ['gpu-b'] });
    homeNoB = noB.home;
    configNoB = noB.configFile;
  }, 60_000);
  afterAll(async () => {
    await fleet?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('the fleet has its own addresses here (the tests use them, not the 127.0.0.1 fallback)', () => {
    expect(fleet.fallback).toBeNull();
  });

  it('status --json: all 5 workers on 3 hosts, each with its exact KV from the simulation', async () => {
    const r = await cli(['status', '--host', 'gpu-a', '--add-host', 'gpu-c', '--json'], home);
    expect(r.err).toBe('');
    const j = JSON.parse(r.out) as {
      services: Service[];
      unplaced: unknown[];
      hosts: { id: string }[];
      link: { state: string };
    };
    const truth = fleet.groundTruth();
    const workers = j.services.filter((s) => s.role !== 'router');
    expect(workers).toHaveLength(5);
    expect(truth.workers).toHaveLength(5);
    for (const t of truth.workers) {
      const s = workers.find((w) => w.url === t.url);
      expect(s, t.url).toBeDefined();
      expect([s!.role, s!.host, s!.unit]).toEqual([t.role, t.units[0].host, t.units[0].unit]);
      expect(s!.activeState).toBe(t.units[0].activeState);
      expect(s!.kv, t.name).toMatchObject({
        usedTokens: t.kv!.usedTokens,
        capacityTokens: t.kv!.capacityTokens,
      });
      if (t.units.length > 1)
        expect(s!.units!.map((u) => [u.host, u.unit, u.nodeRank])).toEqual(
          t.units.map((u) => [u.host, u.unit, u.nodeRank]),
        );
    }
    expect(j.unplaced).toEqual([]);
    expect(j.hosts.map((h) => h.id).sort()).toEqual(['gpu-a', 'gpu-b', 'gpu-c']);
    // The report every deployment gets: the origin's link, each worker's condition and headline figures over
    // at least two scrapes.
    expect(j.link.state).toBe('connected');
    for (const s of workers) {
      expect(s.condition.kind, s.url).toBe('serving');
      expect(Object.keys(s.signals), s.url).toEqual(['running', 'queued', 'generationTokensPerSecond']);
      expect(s.scrapes.count, s.url).toBeGreaterThanOrEqual(2);
    }
    expect(r.code).toBe(0);
  });

  it('kv names each worker as the app does, with its exact KV from the simulation', async () => {
    const r = await cli(['kv', '--host', 'gpu-a'], home);
    expect(r.code, r.err).toBe(0);
    const line = r.out.split('\n').find((l) => /^\d{4}-\d\d-\d\dT/.test(l))!;
    expect(line, r.out).toBeDefined();
    const truth = fleet.groundTruth().workers;
    expect(truth.map((t) => t.name).sort()).toEqual([
      'decode-0',
      'decode-1',
      'decode-2',
      'prefill-0',
      'prefill-1',
    ]);
    for (const t of truth) {
      const { usedTokens: used, capacityTokens: cap } = t.kv!;
      const figure = `${t.name}: ${((used / cap) * 100).toFixed(1)} % (${used.toLocaleString('en-US')} / ${cap.toLocaleString('en-US')} tokens`;
      expect(line.split(figure), figure).toHaveLength(2);
    }
  });

  it("metrics reads the worker it is named, on that worker's host; a role of several is refused with their names", async () => {
    const r = await cli(['metrics', '--service', 'decode-2', '--host', 'gpu-a'], home);
    expect(r.code, r.err).toBe(0);
    const d2 = fleet.groundTruth().workers.find((t) => t.name === 'decode-2')!;
    expect(r.out.split('\n')[0]).toMatch(
      new RegExp(
        `^${d2.units[0].host}: decode-2 http://[\\d.]+:${new URL(d2.url).port}/metrics: \\d+ families$`,
      ),
    );
    const refused = await cli(['metrics', '--service', 'decode', '--host', 'gpu-a'], home);
    expect(refused.code).toBe(1);
    expect(refused.err).toContain(
      'decode: this deployment has 3 decode workers (decode-0, decode-1, decode-2); name one with --service',
    );
  });

  it("reads the fleet as the app watches it: each host's monitor, its systemd read through the link's persistent shell", async () => {
    const since = Date.now();
    const r = await cli(['status', '--host', 'gpu-a', '--add-host', 'gpu-c', '--json'], home);
    expect(r.code, r.err).toBe(0);
    for (const h of ['gpu-a', 'gpu-b', 'gpu-c']) {
      const host = fleet.host(h);
      const inShell = host.channels
        .stdinLinesSince(since)
        .filter((e) => e.command.includes('systemctl show'));
      const execs = host.channels.execsSince(since).filter((e) => e.command.includes('systemctl show'));
      // The one-shot probe read systemd with an exec after discovery; the deployment's monitor (the app's
      // DeploymentMonitor, one per host) reads it in the link's long-lived shell. Discovery's own reads are execs.
      expect(inShell.length, `${h}: ${execs.map((e) => e.command).join(' | ')}`).toBeGreaterThan(0);
    }
  });

  it('--host demo-fleet runs the same from nothing: the fleet, its ssh config, the status from gpu-a', async () => {
    const {
      code,
      out: stdout,
      err: stderr,
    } = await cliCaptured(['status', '--host', 'demo-fleet', '--add-host', 'gpu-c', '--json']);
    expect(stderr).toMatch(
      /^demo fleet: ssh config for gpu-a, gpu-b, gpu-c in .*\/\.ssh\/config \(removed on exit\)\n$/,
    );
    const j = JSON.parse(stdout) as {
      simulated: boolean;
      services: Service[];
      hosts: { id: string; via: string }[];
    };
    expect(j.simulated).toBe(true);
    expect(j.services.filter((s) => s.role !== 'router').map((s) => [s.role, s.host, s.unit])).toEqual([
      ['prefill', 'gpu-a', 'sglang-prefill-0.service'],
      ['prefill', 'gpu-a', 'sglang-prefill-1.service'],
      ['decode', 'gpu-b', 'sglang-decode-0.service'],
      ['decode', 'gpu-b', 'sglang-decode-1.service'],
      ['decode', 'gpu-b', 'sglang-decode-2.service'],
    ]);
    for (const s of j.services)
      if (s.role !== 'router') expect(s.kv?.capacityTokens, s.url).toBeGreaterThan(0);
    expect(j.hosts.map((h) => [h.id, h.via])).toEqual([
      ['gpu-a', 'origin'],
      ['gpu-b', 'alias'],
      ['gpu-c', 'added'],
    ]);
    expect(code).toBe(0);
  }, 60_000);

  it('with gpu-b left out of the ssh config: the decode workers are unplaced with the Host/HostName lines to add', async () => {
    const r = await cli(['status', '--host', 'gpu-a', '--json'], homeNoB);
    const j = JSON.parse(r.out) as {
      unplaced: { url: string; reason: string; fix: string }[];
      services: Service[];
    };
    const b = fleet.host('gpu-b').address;
    const decode = fleet.groundTruth().workers.filter((w) => w.role === 'decode');
    expect(j.unplaced.map((u) => [u.url, u.reason, u.fix])).toEqual(
      decode.map((w) => [
        w.url,
        `decode worker ${w.url} (listed by the router): no ssh alias resolves to ${b}`,
        `add \`Host <name>\` / \`HostName ${b}\` (with its User and IdentityFile) to ${configNoB}`,
      ]),
    );
    expect(j.services.filter((s) => s.role === 'prefill')).toHaveLength(2);
    expect(r.code).toBe(3);
  });
});
