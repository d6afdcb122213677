// The processes of one demo host as the kernel shows them: pid, parent, owner, /proc/<pid>/cmdline, what ps
// prints, the comm ss names, and the TCP sockets each listens on. One table feeds `ps`, `head`/`cat` of
// /proc/<pid>/cmdline and `ss -p`, so the three agree as they do on a real host: a unit's main process runs its
// ExecStart with the variables expanded; SGLang's children (multiprocessing's resource tracker, one scheduler per
// GPU — the pids nvidia-smi lists —, the detokenizer) have retitled themselves with setproctitle, which pads the
// old argv with NULs.
import type { DemoMachine } from './machine';
import { staticFileOf, staticUnitsOf } from './prometheus-unit';
import type { UnitRuntime } from './simulation';
import { BACKGROUND_UNITS, PYTHON, servesHttp } from './units';

export interface Listen {
  /** As ss prints it: "0.0.0.0", "127.0.0.1", "[::]", "*", "127.0.0.53%lo". */
  address: string;
  port: number;
  fd: number;
  backlog: number;
}

export interface DemoProcess {
  pid: number;
  ppid: number;
  user: string;
  /** The bytes of /proc/<pid>/cmdline. */
  cmdline: Buffer;
  /** What `ps -o args` prints. */
  args: string;
  /** /proc/<pid>/comm: what ss names the process by (at most 15 bytes). */
  comm: string;
  listens: Listen[];
}

/** The SSH session a command runs in: sshd's two processes for it and the command itself. */
export interface Session {
  user: string;
  /** The command's argv (e.g. ps's own). */
  argv: string[];
}

const KERNEL_THREADS: ReadonlyArray<[number, number, string]> = [
  [2, 0, 'kthreadd'],
  [3, 2, 'rcu_gp'],
  [4, 2, 'rcu_par_gp'],
  [5, 2, 'slub_flushwq'],
  [13, 2, 'ksoftirqd/0'],
  [14, 2, 'rcu_preempt'],
  [15, 2, 'migration/0'],
  [1843, 2, 'nv_queue'],
  [1844, 2, 'nvidia-modeset/kthread_q'],
  [1850, 2, 'irq/221-nvidia'],
];

const nulJoined = (argv: readonly string[]): Buffer => Buffer.from(`${argv.join('\0')}\0`, 'utf8');
const baseName = (path: string): string => path.slice(path.lastIndexOf('/') + 1).slice(0, 15);

function plain(
  pid: number,
  ppid: number,
  user: string,
  argv: readonly string[],
  listens: Listen[] = [],
): DemoProcess {
  return {
    pid,
    ppid,
    user,
    cmdline: nulJoined(argv),
    args: argv.join(' '),
    comm: baseName(argv[0] ?? ''),
    listens,
  };
}

/** A process that renamed itself with setproctitle: the title, then NULs over the rest of its old argv. */
function retitled(
  pid: number,
  ppid: number,
  user: string,
  title: string,
  oldArgv: readonly string[],
): DemoProcess {
  const old = nulJoined(oldArgv);
  const t = Buffer.from(title, 'utf8');
  const cmdline =
    t.length < old.length
      ? Buffer.concat([t, Buffer.alloc(old.length - t.length)])
      : Buffer.concat([t, Buffer.alloc(1)]);
  return { pid, ppid, user, cmdline, args: title, comm: title.slice(0, 15), listens: [] };
}

/** The processes of an SGLang unit while its main process runs. */
function unitProcesses(m: DemoMachine, u: UnitRuntime): DemoProcess[] {
  if (!u.mainPid) return [];
  const d = u.def;
  const main = plain(u.mainPid, 1, 'root', d.argv);
  const out = [main];
  if (u.router) {
    if (u.router.listening)
      main.listens.push(
        { address: '0.0.0.0', port: d.router?.apiPort ?? 0, fd: 9, backlog: 1024 },
        { address: '127.0.0.1', port: d.router?.metricsPort ?? 0, fd: 10, backlog: 1024 },
      );
    return out;
  }
  const spec = d.server;
  if (!spec || !u.server) return out;
  // SGLang's KV bootstrap server is up from the start; uvicorn listens once the model is loaded.
  if (spec.bootstrapPort !== undefined)
    main.listens.push({ address: '0.0.0.0', port: spec.bootstrapPort, fd: 38, backlog: 128 });
  if (servesHttp(spec) && u.server.stage !== 'loading' && !m.isDown)
    main.listens.push({ address: spec.listenHost, port: spec.port, fd: 43, backlog: 2048 });
  const kids = u.children;
  if (!kids) return out;
  out.push(
    plain(kids.tracker, u.mainPid, 'root', [
      PYTHON,
      '-c',
      'from multiprocessing.resource_tracker import main;main(37)',
    ]),
  );
  const spawnArgv = (fd: number): string[] => [
    PYTHON,
    '-c',
    `from multiprocessing.spawn import spawn_main; spawn_main(tracker_fd=37, pipe_handle=${fd})`,
    '--multiprocessing-fork',
  ];
  const firstTp = (spec.node?.rank ?? 0) * kids.schedulers.length;
  let parent = u.mainPid;
  if (kids.dpController !== undefined) {
    out.push(
      retitled(kids.dpController, u.mainPid, 'root', 'sglang::data_parallel_controller', spawnArgv(40)),
    );
    parent = kids.dpController;
  }
  kids.schedulers.forEach((pid, t) => {
    const tp = firstTp + t;
    const dp = spec.dpRanks > 1 ? `_DP${Math.floor((tp * spec.dpRanks) / spec.tp)}` : '';
    const sched = retitled(pid, parent, 'root', `sglang::scheduler${dp}_TP${tp}`, spawnArgv(42 + t));
    // torch.distributed's store of a multi-node server listens on --dist-init-addr on node 0's first rank.
    if (spec.node && spec.node.rank === 0 && t === 0) {
      const port = Number(spec.node.distInitAddr.split(':').pop());
      if (Number.isInteger(port)) sched.listens.push({ address: '*', port, fd: 27, backlog: 2048 });
    }
    out.push(sched);
  });
  if (kids.detokenizer !== undefined)
    out.push(retitled(kids.detokenizer, u.mainPid, 'root', 'sglang::detokenizer', spawnArgv(60)));
  return out;
}

/** Static units (the optional prometheus.service): ExecStart with its EnvironmentFile's variables. */
function staticProcesses(m: DemoMachine): DemoProcess[] {
  return staticUnitsOf(m).map((st, i) => {
    const env: Record<string, string> = {};
    for (const f of st.environmentFiles)
      for (const line of (staticFileOf(m, f) ?? '').split('\n')) {
        const kv = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line.trim());
        if (kv) env[kv[1]] = kv[2].replace(/^"(.*)"$/, '$1');
      }
    const argv = st.execStartArgv.flatMap((w) => {
      const bare = /^\$([A-Za-z_][A-Za-z0-9_]*)$/.exec(w);
      return bare ? (env[bare[1]] ?? '').split(/\s+/).filter(Boolean) : [w];
    });
    const listen = /^--web\.listen-address=(.*):(\d+)$/.exec(
      argv.find((a) => a.startsWith('--web.listen-address=')) ?? '',
    );
    return plain(
      staticPid(st.name, i),
      1,
      'prometheus',
      argv,
      listen
        ? [
            {
              address: listen[1] === '' || listen[1] === '0.0.0.0' ? '*' : listen[1],
              port: Number(listen[2]),
              fd: 7,
              backlog: 4096,
            },
          ]
        : [],
    );
  });
}

/** MainPID of a static unit. */
export function staticPid(name: string, index: number): number {
  return 1187 + index * 23 + (name.length % 7);
}

/** Every process of the host, in pid order (what `ps -e` lists). */
export function processTable(m: DemoMachine, session?: Session): DemoProcess[] {
  const out: DemoProcess[] = [plain(1, 0, 'root', ['/sbin/init'])];
  for (const [pid, ppid, name] of KERNEL_THREADS)
    out.push({
      pid,
      ppid,
      user: 'root',
      cmdline: Buffer.alloc(0),
      args: `[${name}]`,
      comm: name.slice(0, 15),
      listens: [],
    });
  if (!m.isDown) {
    for (const b of BACKGROUND_UNITS)
      out.push(
        b.title
          ? {
              ...retitled(b.pid, 1, b.user, b.title, b.argv),
              comm: baseName(b.argv[0]),
              listens: [...(b.listens ?? [])],
            }
          : plain(b.pid, 1, b.user, b.argv, [...(b.listens ?? [])]),
      );
    out.push(...staticProcesses(m));
    for (const u of m.units()) out.push(...unitProcesses(m, u));
    // Someone else's job on a worker's GPUs (the foreign-gpu-process fault).
    for (const f of m.foreignGpuProcesses()) out.push(plain(f.pid, 1, 'alice', f.args.split(' ')));
    if (session) {
      // sshd's privileged monitor and the user's session process, then the command.
      const base = 200_000 + (Math.floor(m.now / 1000) % 50_000) * 3;
      const sshd = BACKGROUND_UNITS.find((b) => b.name === 'ssh.service')?.pid ?? 1;
      out.push(retitled(base, sshd, 'root', `sshd: ${session.user} [priv]`, ['/usr/sbin/sshd', '-D', '-R']));
      out.push({
        ...retitled(base + 2, base, session.user, `sshd: ${session.user}@notty`, [
          '/usr/sbin/sshd',
          '-D',
          '-R',
        ]),
        comm: 'sshd',
      });
      out.push(plain(base + 3, base + 2, session.user, session.argv));
    }
  }
  return out.sort((a, b) => a.pid - b.pid);
}
