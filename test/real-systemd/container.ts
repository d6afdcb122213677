// A real Debian 12 host for tests: systemd 252, journald, dbus and OpenSSH booted with `systemd-nspawn --boot` on
// a cached debootstrap root (image/build.sh), one throw-away overlay per boot. It shares this machine's network
// and listens on a loopback address of its own (127.0.0.42 and up), so the product reaches it over real SSH as
// it would a GPU host. What runs there are real systemd units; only the SGLang processes are stand-ins
// (image/files: SGLang's command line, log and HTTP surface, relayed to the demo simulation), because GPUs and
// SGLang cannot exist here.
//
// Needs root (nspawn, overlayfs), systemd-container, debootstrap and a reachable Debian mirror the first time;
// `realSystemdUnavailableReason()` says which is missing, and the tests skip with that sentence.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const BUILD = fileURLToPath(new URL('./image/build.sh', import.meta.url));
const NSPAWN = '/usr/bin/systemd-nspawn';
const DEBOOTSTRAP = '/usr/sbin/debootstrap';
const NSENTER = '/usr/bin/nsenter';
const SSH_KEYGEN = '/usr/bin/ssh-keygen';

/** The unprivileged login the tests use; it has passwordless sudo, as operators' accounts on GPU hosts often do. */
export const REAL_USER = 'ops';

/** Why a real systemd cannot be booted here, or null. */
export function realSystemdUnavailableReason(): string | null {
  if (process.platform !== 'linux') return 'systemd-nspawn runs on Linux only';
  if (process.getuid?.() !== 0) return 'booting a container with systemd-nspawn needs root';
  for (const [bin, pkg] of [
    [NSPAWN, 'systemd-container'],
    [DEBOOTSTRAP, 'debootstrap'],
    [NSENTER, 'util-linux'],
    [SSH_KEYGEN, 'openssh-client'],
  ] as const)
    if (!existsSync(bin)) return `${bin} is not installed (apt-get install ${pkg})`;
  if (!readFileSync('/proc/filesystems', 'utf8').includes('overlay'))
    return 'the kernel has no overlay file system (each boot runs on an overlay of the cached root)';
  return null;
}

export interface RootResult {
  stdout: string;
  stderr: string;
  code: number;
}

export interface RealHost {
  /** The container's own loopback address; its sshd listens there on port 22. */
  address: string;
  port: number;
  user: string;
  /** Private key whose public half is in the user's authorized_keys. */
  keyFile: string;
  /** "ssh-ed25519 AAAA…" of the container's sshd, for a known_hosts line. */
  hostKeyLine: string;
  /** The container's hostname. */
  hostname: string;
  /** A shell command run as root inside the container (nsenter into its namespaces). */
  root(command: string): Promise<RootResult>;
  /** Writes a file into the container's root (through the overlay, as root). */
  writeFile(file: string, content: string | Buffer, mode?: number): void;
  /** Everything the container printed on its console. */
  console(): string;
  stop(): Promise<void>;
}

export interface BootOptions {
  /** Files to place before boot, by absolute path inside the container (unit files, env files, scripts). */
  files?: Record<string, string | { content: string; mode: number }>;
  /** Files that depend on the container's address, which is only known once taken. */
  addressed?: (address: string) => NonNullable<BootOptions['files']>;
  /** Units to enable (started at boot). */
  enable?: string[];
  /**
   * Boot the container on the unified cgroup hierarchy (cgroup v2), as current GPU hosts run, even where this
   * machine still mounts the hybrid one: systemd then accounts CPU time per unit and logs it ("Consumed … CPU
   * time.") when a unit stops. On a hybrid machine no controller is delegated to it, so systemd also logs
   * "Failed to kill control group …, ignoring: Input/output error" when it stops a unit.
   */
  unifiedCgroup?: boolean;
}

/** Builds or reuses the cached root; returns its path. Several minutes the first time on a slow mirror. */
export async function realSystemdImage(): Promise<string> {
  const { stdout } = await run('/bin/bash', [BUILD], { maxBuffer: 1 << 20, timeout: 15 * 60_000 });
  const root = stdout.trim().split('\n').pop() ?? '';
  if (!existsSync(path.join(root, '.complete'))) throw new Error(`image/build.sh printed no root: ${stdout}`);
  return root;
}

/**
 * A loopback address no other running container of this machine holds: a lock directory per address, created
 * whole with its owner's pid inside (renamed into place, so nobody ever sees it without the pid).
 */
function takeAddress(inUse: ReadonlySet<number>): { address: string; release: () => void } {
  for (let n = 42; n < 250; n++) {
    const lock = path.join(os.tmpdir(), `pd-real-systemd-127.0.0.${n}.lock`);
    if (inUse.has(n)) continue;
    const owner = Number(readFileSafe(path.join(lock, 'pid')));
    if (owner && processAlive(owner)) continue;
    if (owner) rmSync(lock, { recursive: true, force: true });
    const mine = `${lock}.${process.pid}.${Date.now()}`;
    mkdirSync(mine);
    writeFileSync(path.join(mine, 'pid'), String(process.pid));
    try {
      renameSync(mine, lock);
    } catch {
      rmSync(mine, { recursive: true, force: true });
      continue;
    }
    return { address: `127.0.0.${n}`, release: () => rmSync(lock, { recursive: true, force: true }) };
  }
  throw new Error('no free loopback address for a test container (127.0.0.42–249 all taken)');
}

function readFileSafe(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The container's PID 1 as this machine sees it: the child of systemd-nspawn that runs systemd. */
async function leaderOf(nspawn: ChildProcess, deadline: number): Promise<number> {
  for (;;) {
    for (const tid of readdirSafe(`/proc/${nspawn.pid}/task`)) {
      for (const child of readFileSafe(`/proc/${nspawn.pid}/task/${tid}/children`).split(/\s+/)) {
        // The child is systemd-nspawn until it execs the container's init.
        if (child && readFileSafe(`/proc/${child}/comm`).trim() === 'systemd') return Number(child);
      }
    }
    if (nspawn.exitCode !== null) throw new Error('systemd-nspawn exited during boot');
    if (Date.now() > deadline) throw new Error('systemd-nspawn started no systemd within the boot deadline');
    await new Promise((r) => setTimeout(r, 50));
  }
}

function readdirSafe(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function tcpOpen(address: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host: address, port });
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });
}

/** Boots a container; resolves once systemd reports the boot finished and sshd accepts connections. */
export async function bootRealSystemd(opts: BootOptions = {}): Promise<RealHost> {
  const image = await realSystemdImage();
  // Something already listening on an address (a container a crashed run left behind) rules it out too.
  const inUse = new Set<number>();
  for (const line of readFileSafe('/proc/net/tcp').split('\n').slice(1)) {
    const m = /^\s*\d+: ([0-9A-F]{8}):([0-9A-F]{4}) [0-9A-F:]+ 0A /.exec(line);
    if (m && m[1].endsWith('7F')) inUse.add(parseInt(m[1].slice(0, 2), 16));
  }
  const { address, release } = takeAddress(inUse);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'pd-real-systemd-'));
  const merged = path.join(dir, 'root');
  for (const d of ['upper', 'work', 'root']) mkdirSync(path.join(dir, d));
  await run('/bin/mount', [
    '-t',
    'overlay',
    'overlay',
    '-o',
    `lowerdir=${image},upperdir=${dir}/upper,workdir=${dir}/work`,
    merged,
  ]);
  const hostname = `gpu-real-${address.split('.')[3]}`;
  const write = (file: string, content: string | Buffer, mode = 0o644): void => {
    const target = path.join(merged, file);
    mkdirSync(path.dirname(target), { recursive: true });
    writeFileSync(target, content, { mode });
  };
  const keyFile = path.join(dir, 'id_ed25519');
  await run(SSH_KEYGEN, ['-q', '-t', 'ed25519', '-N', '', '-C', 'pd-console-test', '-f', keyFile]);
  write('etc/hostname', `${hostname}\n`);
  write('etc/ssh/sshd_config.d/pd-console.conf', `ListenAddress ${address}\nPort 22\nUseDNS no\n`);
  write(`home/${REAL_USER}/.ssh/authorized_keys`, readFileSync(`${keyFile}.pub`), 0o600);
  await run('/usr/sbin/chroot', [
    merged,
    '/bin/sh',
    '-c',
    `chown -R ${REAL_USER}:${REAL_USER} /home/${REAL_USER}/.ssh && chmod 700 /home/${REAL_USER}/.ssh`,
  ]);
  for (const [file, spec] of Object.entries({ ...opts.files, ...opts.addressed?.(address) })) {
    if (typeof spec === 'string') write(file, spec);
    else write(file, spec.content, spec.mode);
  }
  for (const unit of opts.enable ?? [])
    await run('/usr/sbin/chroot', [merged, 'systemctl', 'enable', '--quiet', unit]);
  const hostKeyLine = readFileSync(path.join(merged, 'etc/ssh/ssh_host_ed25519_key.pub'), 'utf8')
    .trim()
    .split(' ')
    .slice(0, 2)
    .join(' ');

  let consoleText = '';
  const nspawn = spawn(
    NSPAWN,
    [
      '--boot',
      '--keep-unit',
      '--register=no',
      '--link-journal=no',
      '--resolv-conf=off',
      '--console=pipe',
      `--machine=${hostname}`,
      '-D',
      merged,
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: opts.unifiedCgroup ? { ...process.env, SYSTEMD_NSPAWN_UNIFIED_HIERARCHY: '1' } : process.env,
    },
  );
  const keep = (b: Buffer): void => {
    consoleText = (consoleText + b.toString('utf8')).slice(-200_000);
  };
  nspawn.stdout?.on('data', keep);
  nspawn.stderr?.on('data', keep);
  const exited = new Promise<void>((resolve) => nspawn.once('exit', () => resolve()));

  let stopped = false;
  let leader = 0;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    if (nspawn.exitCode === null) {
      nspawn.kill('SIGTERM');
      const killer = setTimeout(() => nspawn.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(killer);
    }
    // The container's init outlives a killed nspawn (it leads its own PID namespace); ending it ends them all.
    if (leader > 0 && processAlive(leader)) process.kill(leader, 'SIGKILL');
    await run('/bin/umount', ['-l', merged]).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
    release();
  };

  try {
    leader = await leaderOf(nspawn, Date.now() + 30_000);
    const root = async (command: string): Promise<RootResult> => {
      try {
        const r = await run(
          NSENTER,
          ['-t', String(leader), '-m', '-u', '-i', '-p', '--', '/bin/sh', '-c', command],
          {
            maxBuffer: 32 << 20,
            encoding: 'utf8',
          },
        );
        return { stdout: r.stdout, stderr: r.stderr, code: 0 };
      } catch (err) {
        const e = err as { stdout?: string; stderr?: string; code?: number };
        return {
          stdout: e.stdout ?? '',
          stderr: e.stderr ?? '',
          code: typeof e.code === 'number' ? e.code : 1,
        };
      }
    };
    // `--wait` returns when the boot transaction is done: the event, not a guess at how long a boot takes.
    // systemctl needs PID 1's private socket, which appears a moment into the boot.
    const booted = await root(
      'timeout 60 sh -c "until [ -S /run/systemd/private ]; do sleep 0.05; done; systemctl is-system-running --wait"',
    );
    if (!/running|degraded/.test(booted.stdout))
      throw new Error(`the container did not finish booting: ${booted.stdout}${booted.stderr}`);
    if (!(await tcpOpen(address, 22)))
      throw new Error(
        `sshd in the container does not listen on ${address}:22:\n${(await root('journalctl -u ssh --no-pager')).stdout}`,
      );
    return {
      address,
      port: 22,
      user: REAL_USER,
      keyFile,
      hostKeyLine,
      hostname,
      root,
      writeFile: (file, content, mode) => write(file.replace(/^\//, ''), content, mode),
      console: () => consoleText,
      stop,
    };
  } catch (err) {
    await stop();
    throw new Error(`${(err as Error).message}\n--- container console ---\n${consoleText.slice(-4000)}`, {
      cause: err,
    });
  }
}
