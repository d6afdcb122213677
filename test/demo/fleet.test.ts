// The demo fleet (issue 15.5): three simulated hosts on 127.0.0.2/.3/.4, each its own SSH server with its
// own host key, reached with a real ssh2 client; each host's tools show that host only; the router lists
// the five workers; a forward through one host reaches another; the multi-node worker; ground truth equals
// what /metrics says; the unit history; uneven load; and the real OpenSSH client with the written config.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'ssh2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemoFleet, type DemoFleet, type DemoFleetHost } from '../../src/main/demo/fleet';
import type { FleetHostName } from '../../src/main/demo/topology';
import { exec, httpGet, manualClock, parseShow, type ManualClock } from './helpers';

const SSH = '/usr/bin/ssh';

let clock: ManualClock;
let fleet: DemoFleet;
const clients = new Map<FleetHostName, Client>();

function connectTo(h: DemoFleetHost, hostKey: Buffer = h.hostKeyPublic): Promise<Client> {
  const c = new Client();
  return new Promise((resolve, reject) => {
    c.once('ready', () => resolve(c));
    c.once('error', reject);
    c.connect({
      host: h.address,
      port: h.port,
      username: fleet.username,
      privateKey: fleet.clientPrivateKey,
      hostVerifier: (key: Buffer) => key.equals(hostKey),
      readyTimeout: 10_000,
    });
  });
}

const on = (name: FleetHostName): Client => clients.get(name) as Client;

/** Sum of a gauge's samples in Prometheus text (one per DP rank). */
function gaugeSum(text: string, name: string): number {
  const re = new RegExp(`^${name.replace(/[:]/g, '\\:')}(?:\\{[^}]*\\})? (\\S+)$`, 'gm');
  let sum = 0;
  let n = 0;
  for (const m of text.matchAll(re)) {
    sum += Number(m[1]);
    n++;
  }
  if (!n) throw new Error(`no ${name} samples in the scrape`);
  return sum;
}

beforeAll(async () => {
  clock = manualClock();
  fleet = await startDemoFleet({ clock, seed: 7, historyMs: 10 * 60_000 });
  for (const h of fleet.hosts) clients.set(h.name, await connectTo(h));
}, 60_000);

afterAll(async () => {
  for (const c of clients.values()) c.end();
  await fleet?.stop();
});

describe('three hosts, each its own SSH server', () => {
  it('listens on 127.0.0.2, .3 and .4 with distinct host keys; each key verifies only its own host', async () => {
    expect(fleet.fallback).toBeNull();
    expect(fleet.hosts.map((h) => [h.name, h.address])).toEqual([
      ['gpu-a', '127.0.0.2'],
      ['gpu-b', '127.0.0.3'],
      ['gpu-c', '127.0.0.4'],
    ]);
    const keys = new Set(fleet.hosts.map((h) => h.hostKeyPublic.toString('base64')));
    expect(keys.size).toBe(3);
    // gpu-b presenting itself with gpu-a's pinned key is refused: pinning is per host.
    await expect(connectTo(fleet.host('gpu-b'), fleet.host('gpu-a').hostKeyPublic)).rejects.toThrow();
    for (const h of fleet.hosts) {
      const r = await exec(on(h.name), 'hostname');
      expect(r.stdout).toBe(`${h.name}\n`);
    }
  });

  it('systemctl, journalctl and nvidia-smi on each host show that host’s units only', async () => {
    const units = async (name: FleetHostName): Promise<string[]> =>
      (await exec(on(name), 'systemctl list-units --plain --no-legend "sglang-*"')).stdout
        .trim()
        .split('\n')
        .map((l) => l.split(/\s+/)[0]);
    expect(await units('gpu-a')).toEqual([
      'sglang-prefill-0.service',
      'sglang-prefill-1.service',
      'sglang-router.service',
    ]);
    expect(await units('gpu-b')).toEqual([
      'sglang-decode-0.service',
      'sglang-decode-1.service',
      'sglang-decode-2.service',
    ]);
    expect(await units('gpu-c')).toEqual(['sglang-decode-2.service']);

    const journal = (name: FleetHostName, unit: string): Promise<string> =>
      exec(on(name), `journalctl -u ${unit} -n 5 -o cat --no-pager`).then((r) => r.stdout);
    expect(await journal('gpu-b', 'sglang-decode-0.service')).not.toBe('');
    expect(await journal('gpu-a', 'sglang-decode-0.service')).toBe('');
    const a = await exec(on('gpu-a'), 'journalctl -o cat --no-pager -n 2000');
    expect(a.stdout).not.toMatch(/Decode batch/);
    expect(a.stdout).toMatch(/Prefill batch/);
    // Each host has its own boot.
    const boots = await Promise.all(
      fleet.hosts.map((h) => exec(on(h.name), 'cat /proc/sys/kernel/random/boot_id')),
    );
    expect(new Set(boots.map((b) => b.stdout)).size).toBe(3);

    // One compute process per GPU the host's servers use: all 8 on gpu-a and gpu-b, 2 on gpu-c.
    const apps = async (name: FleetHostName): Promise<number> =>
      (await exec(on(name), 'nvidia-smi --query-compute-apps=pid --format=csv,noheader')).stdout
        .trim()
        .split('\n')
        .filter(Boolean).length;
    expect([await apps('gpu-a'), await apps('gpu-b'), await apps('gpu-c')]).toEqual([8, 8, 2]);
    const smi = await exec(
      on('gpu-c'),
      'nvidia-smi --query-gpu=index,memory.used --format=csv,noheader,nounits',
    );
    const used = smi.stdout
      .trim()
      .split('\n')
      .map((l) => Number(l.split(',')[1]));
    // gpu-c runs node rank 1 of decode-2 on GPUs 0–1; 2–7 are idle.
    expect(used.slice(0, 2).every((m) => m > 10_000)).toBe(true);
    expect(used.slice(2).every((m) => m < 1000)).toBe(true);
  });
});

describe('the router and the simulated network', () => {
  it('lists the five workers by the hosts’ addresses in ExecStart and in /workers', async () => {
    const show = await exec(on('gpu-a'), 'systemctl show sglang-router -p ExecStart');
    expect(show.stdout).toContain(
      '--pd-disaggregation --prefill http://127.0.0.2:30100 8998 --prefill http://127.0.0.2:30101 8999 ' +
        '--decode http://127.0.0.3:30200 --decode http://127.0.0.3:30201 --decode http://127.0.0.3:30202',
    );
    const r = await httpGet(on('gpu-a'), 30001, '/workers');
    expect(r.status).toBe(200);
    const body = JSON.parse(r.body) as {
      workers: Array<{ url: string; worker_type: string; is_healthy: boolean; bootstrap_port?: number }>;
      total: number;
      stats: Record<string, number>;
    };
    expect(body.workers.map((w) => [w.url, w.worker_type, w.bootstrap_port])).toEqual([
      ['http://127.0.0.2:30100', 'prefill', 8998],
      ['http://127.0.0.2:30101', 'prefill', 8999],
      ['http://127.0.0.3:30200', 'decode', undefined],
      ['http://127.0.0.3:30201', 'decode', undefined],
      ['http://127.0.0.3:30202', 'decode', undefined],
    ]);
    expect(body.workers.every((w) => w.is_healthy)).toBe(true);
    expect(body).toMatchObject({ total: 5, stats: { prefill_count: 2, decode_count: 3, regular_count: 0 } });
  });

  it('a forward through one host reaches another host’s address; loopback stays on the host', async () => {
    const viaA = await httpGet(on('gpu-a'), 30200, '/health', 5000, '127.0.0.3');
    expect(viaA.status).toBe(200);
    const metrics = await httpGet(on('gpu-c'), 30201, '/metrics', 5000, '127.0.0.3');
    expect(metrics.body).toContain('sglang:num_running_reqs');
    // gpu-a has no decode server: its own 30200 is a closed port.
    await expect(httpGet(on('gpu-a'), 30200, '/health')).rejects.toThrow();
    await expect(httpGet(on('gpu-b'), 30200, '/health')).resolves.toMatchObject({ status: 200 });
    // curl on a host reaches the others by address too.
    const curl = await exec(on('gpu-b'), 'curl -s http://127.0.0.2:30001/readiness');
    expect(JSON.parse(curl.stdout)).toMatchObject({ status: 'ready', healthy_workers: 5, total_workers: 5 });
  });

  it('decode-2 is two units on gpu-b and gpu-c; node rank 1 serves no HTTP', async () => {
    for (const [name, rank] of [
      ['gpu-b', 0],
      ['gpu-c', 1],
    ] as const) {
      const r = await exec(on(name), 'systemctl show sglang-decode-2.service -p ExecStart,ActiveState');
      const p = parseShow(r.stdout)[0];
      expect(p.ActiveState).toBe('active');
      expect(p.ExecStart).toContain(
        `--tp-size 4 --nnodes 2 --node-rank ${rank} --dist-init-addr 127.0.0.3:5757`,
      );
    }
    await expect(httpGet(on('gpu-c'), 30202, '/health')).rejects.toThrow();
    const truth = fleet.groundTruth().workers.find((w) => w.name === 'decode-2');
    expect(truth?.units.map((u) => [u.host, u.unit, u.nodeRank, u.gpus])).toEqual([
      ['gpu-b', 'sglang-decode-2.service', 0, [6, 7]],
      ['gpu-c', 'sglang-decode-2.service', 1, [0, 1]],
    ]);
  });
});

describe('ground truth', () => {
  it('equals what each worker’s /metrics says: KV used and capacity tokens', async () => {
    clock.advance(90_000);
    const truth = fleet.groundTruth();
    expect(truth.workers).toHaveLength(5);
    for (const w of truth.workers) {
      const u = new URL(w.url);
      const scrape = await httpGet(on('gpu-a'), Number(u.port), '/metrics', 5000, u.hostname);
      expect(w.kv, w.name).not.toBeNull();
      expect(gaugeSum(scrape.body, 'sglang:kv_used_tokens'), w.name).toBe(w.kv?.usedTokens);
      expect(gaugeSum(scrape.body, 'sglang:max_total_num_tokens'), w.name).toBe(w.kv?.capacityTokens);
    }
    expect(truth.workers.find((w) => w.name === 'decode-1')?.kv?.capacityTokens).toBeLessThan(
      truth.workers.find((w) => w.name === 'decode-0')?.kv?.capacityTokens ?? 0,
    );
  });

  it('stopping either unit of decode-2 takes the worker down, and the unit history records it', async () => {
    const before = fleet.unitHistory().length;
    const stop = await exec(on('gpu-c'), 'sudo -n systemctl stop --no-block sglang-decode-2.service');
    expect(stop.code).toBe(0);
    clock.advance(10_000);
    const gpuC = fleet
      .unitHistory()
      .slice(before)
      .filter((e) => e.host === 'gpu-c' && e.unit === 'sglang-decode-2.service');
    expect(gpuC.map((e) => e.activeState)).toEqual(['deactivating', 'inactive']);
    expect(gpuC[0].at).toBeLessThan(gpuC[1].at);
    // Node rank 0 on gpu-b still runs, but its collectives hang: /health fails and the router drops it.
    const d2 = (): NonNullable<ReturnType<DemoFleet['groundTruth']>['workers'][number]> =>
      fleet.groundTruth().workers.find((w) => w.name === 'decode-2') as never;
    expect(d2().units[0].activeState).toBe('active');
    expect(d2().health).toBe('starting');
    expect((await httpGet(on('gpu-b'), 30202, '/health')).status).toBe(503);
    clock.advance(40_000);
    expect(d2().routerHealth).toBe('unhealthy');
    expect(fleet.groundTruth().workers.filter((w) => w.routerHealth === 'healthy')).toHaveLength(4);

    // Both nodes restarted (rank 1 first): the worker serves again and the router takes it back.
    fleet.sim.startUnit('gpu-c/sglang-decode-2.service');
    fleet.sim.restartUnit('gpu-b/sglang-decode-2.service');
    for (let i = 0; i < 30 && d2().routerHealth !== 'healthy'; i++) clock.advance(10_000);
    expect(d2()).toMatchObject({ health: 'ok', routerHealth: 'healthy' });
    expect(d2().units.map((u) => u.activeState)).toEqual(['active', 'active']);
  });

  it('shares load unevenly: decode-1 runs well above the other decode workers', () => {
    const sums: Record<string, number> = { 'decode-0': 0, 'decode-1': 0, 'decode-2': 0 };
    for (let i = 0; i < 20; i++) {
      clock.advance(60_000);
      for (const w of fleet.groundTruth().workers) if (w.name in sums) sums[w.name] += w.kv?.ratio ?? 0;
    }
    const avg = Object.fromEntries(Object.entries(sums).map(([k, v]) => [k, v / 20]));
    expect(avg['decode-1']).toBeGreaterThan(avg['decode-0'] + 0.15);
    expect(avg['decode-1']).toBeGreaterThan(avg['decode-2'] + 0.15);
    expect(avg['decode-2']).toBeLessThan(0.6);
  });

  it('a worker fault applies to that worker only', async () => {
    fleet.setFault('metrics-500', true, 'decode-1');
    try {
      expect((await httpGet(on('gpu-b'), 30201, '/metrics')).status).toBe(500);
      expect((await httpGet(on('gpu-b'), 30200, '/metrics')).status).toBe(200);
    } finally {
      fleet.setFault('metrics-500', false, 'decode-1');
    }
    expect(() => fleet.setFault('kv-full', true, 'prefill-0')).toThrow(/does not apply to prefill-0/);
  });
});

describe('the written OpenSSH config', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'pd-fleet-ssh-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('has a Host block per host with the options the console and ssh need; a left-out host has none', async () => {
    const files = await fleet.writeSshConfig(path.join(dir, 'partial'), { omit: ['gpu-c'] });
    expect(files.aliases).toEqual(['gpu-a', 'gpu-b']);
    const text = await readFile(files.configFile, 'utf8');
    expect(text).toContain(
      [
        'Host gpu-b',
        '  HostName 127.0.0.3',
        `  Port ${fleet.host('gpu-b').port}`,
        `  User ${fleet.username}`,
        `  IdentityFile ${files.identityFile}`,
        `  UserKnownHostsFile ${files.knownHostsFile}`,
        '  IdentitiesOnly yes',
      ].join('\n'),
    );
    expect(text).not.toContain('gpu-c');
    expect(files.configFile).toBe(path.join(files.home, '.ssh', 'config'));
    expect((await stat(files.identityFile)).mode & 0o077).toBe(0);
    const known = await readFile(files.knownHostsFile, 'utf8');
    for (const h of fleet.hosts) expect(known).toContain(h.knownHostsLine);
  });

  it.skipIf(!existsSync(SSH))(
    'the real OpenSSH client reaches gpu-b with it: ssh -F config gpu-b systemctl list-units',
    async () => {
      const files = await fleet.writeSshConfig(path.join(dir, 'full'));
      const out = await new Promise<string>((resolve, reject) =>
        execFile(
          SSH,
          [
            '-F',
            files.configFile,
            '-o',
            'BatchMode=yes',
            '-o',
            'StrictHostKeyChecking=yes',
            'gpu-b',
            'systemctl list-units --plain --no-legend "sglang-*"',
          ],
          { timeout: 20_000 },
          (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout)),
        ),
      );
      expect(out).toMatch(/^sglang-decode-0\.service\s+loaded\s+active\s+running/m);
      expect(out).not.toContain('sglang-router');
    },
  );
});

if (!existsSync(SSH))
  console.warn(
    `fleet.test.ts: ${SSH} is absent, so the OpenSSH-client test is skipped (apt-get install openssh-client)`,
  );

describe('fallback to 127.0.0.1', () => {
  it('gives each host its own SSH port, says why, and the ports still tell the hosts apart', async () => {
    const f = await startDemoFleet({
      clock: manualClock(),
      seed: 3,
      historyMs: 5 * 60_000,
      forceFallback: true,
    });
    try {
      expect(f.fallback).toMatch(/127\.0\.0\.1 with its own SSH port/);
      expect(f.hosts.every((h) => h.address === '127.0.0.1')).toBe(true);
      expect(new Set(f.hosts.map((h) => h.port)).size).toBe(3);
      const c = new Client();
      await new Promise<void>((resolve, reject) => {
        c.once('ready', () => resolve());
        c.once('error', reject);
        c.connect({
          host: '127.0.0.1',
          port: f.host('gpu-a').port,
          username: f.username,
          privateKey: f.clientPrivateKey,
          hostVerifier: (k: Buffer) => k.equals(f.host('gpu-a').hostKeyPublic),
        });
      });
      try {
        // From gpu-a, 127.0.0.1:30200 is gpu-b's decode-0: one address, the port says which host.
        const r = await httpGet(c, 30200, '/get_server_info');
        expect(JSON.parse(r.body)).toMatchObject({ port: 30200, disaggregation_mode: 'decode' });
        expect((await exec(c, 'systemctl show sglang-router -p ExecStart')).stdout).toContain(
          '--decode http://127.0.0.1:30202',
        );
      } finally {
        c.end();
      }
    } finally {
      await f.stop();
    }
  });
});
