// A fake fleet for the roll executor: hosts whose links answer the commands a roll sends (systemctl
// stop/start/show, nvidia-smi --query-compute-apps, ps -e, ss -ltn) from a small state machine, a router view
// derived from the units, and a history of every unit state change — so a test can check what happened on
// the "hosts", not what the roll says happened. The Electron-free, SSH-free part only: the real links are
// exercised by the demo tests.
import { systemClock } from '../../src/main/core/clock';
import type { FollowResult, RollIo, RollLink } from '../../src/main/core/actions/roll-run';
import type { ExecResult } from '../../src/main/core/ssh/connection';
import { SshError } from '../../src/main/core/ssh/errors';
import type { RollHealth, RollUnit, RollWorker } from '../../src/shared/contract';

export interface FakeUnit {
  host: string;
  unit: string;
  state: 'active' | 'deactivating' | 'inactive';
  invocation: number;
  pid: number;
  gpus: number[];
  ports: number[];
  /** GPU processes linger this many probes after the unit stopped. */
  lingering: number;
  /** Never release the GPUs (a stuck process). */
  stuckGpus?: boolean;
}

export interface HistoryEntry {
  seq: number;
  host: string;
  unit: string;
  state: 'active' | 'inactive';
}

export class FakeFleet {
  readonly units = new Map<string, FakeUnit>();
  readonly history: HistoryEntry[] = [];
  readonly commands: Array<{ host: string; command: string }> = [];
  readonly down = new Set<string>();
  /** Workers the router calls unhealthy whatever their units do. */
  readonly forceUnhealthy = new Set<string>();
  /** Processes of no unit on a host's GPUs (someone else's job). */
  readonly foreign: Array<{ host: string; pid: number; gpus: number[] }> = [];
  /** Called before each command: lets a test drop a link at an exact point. */
  beforeExec?: (host: string, command: string) => void;
  /** Answers a command instead of the fleet (a broken or missing tool); undefined: the fleet answers. */
  answer?: (host: string, command: string) => ExecResult | undefined;
  private seq = 0;
  // Far apart: a unit's GPU processes are its pid + GPU index.
  private nextPid = 1000;
  private allocPid(): number {
    this.nextPid += 100;
    return this.nextPid;
  }

  constructor(readonly workers: RollWorker[]) {
    for (const w of workers)
      for (const u of w.units) {
        const ports: number[] = [];
        if (u.nodeRank === 0) {
          ports.push(Number(new URL(w.apiUrl).port));
          if (w.bootstrapPort) ports.push(w.bootstrapPort);
        }
        this.units.set(key(u.hostId, u.unit), {
          host: u.hostId,
          unit: u.unit,
          state: 'active',
          invocation: 1,
          pid: this.allocPid(),
          gpus: u.gpus,
          ports,
          lingering: 0,
        });
      }
  }

  unit(host: string, unit: string): FakeUnit {
    return this.units.get(key(host, unit))!;
  }

  link(host: string): RollLink {
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const fleet = this;
    return {
      label: host,
      get isConnected() {
        return !fleet.down.has(host);
      },
      exec: (command: string) => this.exec(host, command),
    };
  }

  private record(u: FakeUnit, state: 'active' | 'inactive'): void {
    this.history.push({ seq: this.seq++, host: u.host, unit: u.unit, state });
  }

  async exec(host: string, command: string): Promise<ExecResult> {
    this.beforeExec?.(host, command);
    await Promise.resolve();
    if (this.down.has(host))
      throw new SshError({ code: 'not-connected', message: `not connected to ${host}` });
    this.commands.push({ host, command });
    const given = this.answer?.(host, command);
    if (given) return given;
    const ok = (stdout = ''): ExecResult => ({ stdout, stderr: '', exitCode: 0 });
    const argv = command.split(' ');
    const name = argv.at(-1)!;
    if (/systemctl --no-block stop /.test(command)) {
      const u = this.unit(host, name);
      if (u.state === 'active') {
        u.state = 'deactivating';
        u.lingering = 2;
      }
      return ok();
    }
    if (/systemctl --no-block start /.test(command)) {
      const u = this.unit(host, name);
      if (u.state !== 'active') {
        u.state = 'active';
        u.invocation++;
        u.pid = this.allocPid();
        this.record(u, 'active');
      }
      return ok();
    }
    if (command.startsWith('systemctl show')) {
      const u = this.unit(host, name);
      if (u.state === 'deactivating') {
        // One reading of "deactivating", then it is gone.
        u.state = 'inactive';
        this.record(u, 'inactive');
        return ok(show(u, 'deactivating'));
      }
      return ok(show(u, u.state));
    }
    if (command.startsWith('nvidia-smi')) {
      const ids = argv[argv.indexOf('-i') + 1].split(',').map(Number);
      const lines: string[] = [];
      for (const u of this.units.values()) {
        if (u.host !== host || !u.gpus.some((g) => ids.includes(g))) continue;
        if (this.gpuProcessesRun(u))
          for (const g of u.gpus) if (ids.includes(g)) lines.push(`${u.pid + g}, GPU-${host}-${g}, 70000`);
      }
      for (const f of this.foreign)
        if (f.host === host)
          for (const g of f.gpus) if (ids.includes(g)) lines.push(`${f.pid}, GPU-${host}-${g}, 30720`);
      return ok(lines.length ? `${lines.join('\n')}\n` : '');
    }
    if (command === 'ps -e -o pid=,ppid=,args=') {
      const rows = ['      1       0 /sbin/init'];
      const row = (pid: number, ppid: number, args: string) =>
        rows.push(`${String(pid).padStart(7)} ${String(ppid).padStart(7)} ${args}`);
      for (const u of this.units.values()) {
        if (u.host !== host) continue;
        const main = u.state !== 'inactive';
        if (main) row(u.pid, 1, `python3 -m sglang.launch_server # ${u.unit}`);
        // A GPU process that outlives its unit's main process is re-parented to init.
        if (u.gpus.length && (main || u.stuckGpus || u.lingering > 0))
          for (const g of u.gpus) row(u.pid + g, main ? u.pid : 1, `sglang::scheduler_TP${g}`);
      }
      for (const f of this.foreign) if (f.host === host) row(f.pid, 1, 'python3 /home/alice/train.py');
      return ok(`${rows.join('\n')}\n`);
    }
    if (command === 'ss -ltn') {
      const rows = [
        'State  Recv-Q Send-Q Local Address:Port Peer Address:Port Process',
        'LISTEN 0 128 0.0.0.0:22 0.0.0.0:*',
      ];
      for (const u of this.units.values())
        if (u.host === host && u.state === 'active')
          for (const p of u.ports) rows.push(`LISTEN 0 2048 0.0.0.0:${p} 0.0.0.0:*`);
      return ok(`${rows.join('\n')}\n`);
    }
    return { stdout: '', stderr: `bash: ${argv[0]}: command not found`, exitCode: 127 };
  }

  /** Whether the unit's GPU processes still run (one reading of a lingering process uses it up). */
  private gpuProcessesRun(u: FakeUnit): boolean {
    return u.state !== 'inactive' || !!u.stuckGpus || u.lingering-- > 0;
  }

  health(): Map<string, RollHealth> {
    const out = new Map<string, RollHealth>();
    for (const w of this.workers) {
      const up = w.units.every((u) => this.unit(u.hostId, u.unit).state === 'active');
      out.set(
        w.id,
        up && !this.forceUnhealthy.has(w.id)
          ? { state: 'healthy', detail: `the router reports ${w.id} healthy` }
          : { state: 'unhealthy', detail: `the router reports ${w.id} unhealthy` },
      );
    }
    return out;
  }

  io(overrides: Partial<RollIo> = {}): RollIo {
    return {
      link: (h) => this.link(h),
      readHealth: () => Promise.resolve(this.health()),
      followStart: async ({ unit, command }: { unit: RollUnit; command: string }): Promise<FollowResult> => {
        const res = await this.exec(unit.hostId, command);
        return res.exitCode === 0
          ? { state: 'succeeded' }
          : { state: 'failed', failure: { step: 'command', message: res.stderr } };
      },
      pacer: { clock: systemClock, pollMs: 2, minRealGapMs: 1 },
      ...overrides,
    };
  }

  /** Most units of `role` workers that were down at the same moment, from the history. */
  maxDownAtOnce(role: string): number {
    const roleUnits = new Map<string, string>();
    for (const w of this.workers)
      if (w.role === role) for (const u of w.units) roleUnits.set(key(u.hostId, u.unit), w.id);
    const downUnits = new Set<string>();
    let max = 0;
    for (const e of this.history) {
      const k = key(e.host, e.unit);
      if (!roleUnits.has(k)) continue;
      if (e.state === 'inactive') downUnits.add(k);
      else downUnits.delete(k);
      max = Math.max(max, new Set([...downUnits].map((x) => roleUnits.get(x))).size);
    }
    return max;
  }
}

function key(host: string, unit: string): string {
  return `${host}/${unit}`;
}

function show(u: FakeUnit, state: string): string {
  return [
    `Id=${u.unit}`,
    'LoadState=loaded',
    `ActiveState=${state}`,
    `SubState=${state === 'active' ? 'running' : state === 'inactive' ? 'dead' : 'stop-sigterm'}`,
    'Result=success',
    `MainPID=${state === 'inactive' ? 0 : u.pid}`,
    `ExecMainPID=${u.pid}`,
    'ExecMainStatus=0',
    'NRestarts=0',
    `InvocationID=inv${u.invocation}`,
    '',
  ].join('\n');
}

/** The demo fleet's shape (fleet-topology.md): 2 prefill on gpu-a, decode-0/1 on gpu-b, decode-2 on gpu-b + gpu-c. */
export function fleetWorkers(): RollWorker[] {
  const unit = (hostId: string, name: string, gpus: number[], nodeRank = 0): RollUnit => ({
    hostId,
    hostLabel: hostId,
    unit: name,
    nodeRank,
    gpus,
  });
  return [
    {
      id: 'http://127.0.0.2:30001',
      name: 'router',
      role: 'router',
      apiUrl: 'http://127.0.0.2:30001',
      units: [unit('gpu-a', 'sglang-router.service', [])],
    },
    ...[0, 1].map((i): RollWorker => ({
      id: `http://127.0.0.2:3010${i}`,
      name: `prefill-${i}`,
      role: 'prefill',
      apiUrl: `http://127.0.0.2:3010${i}`,
      bootstrapPort: 8998 + i,
      units: [unit('gpu-a', `sglang-prefill-${i}.service`, i ? [4, 5, 6, 7] : [0, 1, 2, 3])],
    })),
    {
      id: 'http://127.0.0.3:30200',
      name: 'decode-0',
      role: 'decode',
      apiUrl: 'http://127.0.0.3:30200',
      units: [unit('gpu-b', 'sglang-decode-0.service', [0, 1, 2, 3])],
    },
    {
      id: 'http://127.0.0.3:30201',
      name: 'decode-1',
      role: 'decode',
      apiUrl: 'http://127.0.0.3:30201',
      units: [unit('gpu-b', 'sglang-decode-1.service', [4, 5])],
    },
    {
      id: 'http://127.0.0.3:30202',
      name: 'decode-2',
      role: 'decode',
      apiUrl: 'http://127.0.0.3:30202',
      units: [
        unit('gpu-b', 'sglang-decode-2.service', [6, 7], 0),
        unit('gpu-c', 'sglang-decode-2.service', [0, 1], 1),
      ],
    },
  ];
}
