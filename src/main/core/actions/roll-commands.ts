// The commands a rolling restart sends besides the one-service restart's own, and how their answers read:
// stop/start of one unit, the compute processes on a worker's GPUs, and the TCP ports listening on a host.
// Unit names pass assertUnitName; every line is built by shellCommand.
import { assertUnitName, shellCommand } from '../ssh/shell';
import type { Privilege } from './unit-commands';

export function unitVerbCommand(verb: 'stop' | 'start', unit: string, privilege: Privilege): string {
  // --no-block for the same reason as the restart: no SSH channel held while systemd works; the roll
  // follows the unit with `systemctl show`, which survives reconnects.
  const argv = ['systemctl', '--no-block', verb, assertUnitName(unit)];
  return shellCommand(privilege === 'sudo' ? ['sudo', '-n', ...argv] : argv);
}

/** The compute processes on these GPUs; no output line means none. */
export function gpuAppsCommand(gpus: readonly number[]): string {
  const ids = gpus.map((g) => {
    if (!Number.isInteger(g) || g < 0) throw new Error(`GPU index ${g} is not a non-negative integer`);
    return String(g);
  });
  return shellCommand([
    'nvidia-smi',
    '--query-compute-apps=pid,gpu_uuid,used_memory',
    '--format=csv,noheader,nounits',
    '-i',
    ids.join(','),
  ]);
}

export interface GpuApp {
  pid: number;
  gpuUuid: string;
  usedMiB: number | null;
}

/**
 * Parses `--query-compute-apps=pid,gpu_uuid,used_memory --format=csv,noheader,nounits`. Returns null when the
 * output is not that table (nvidia-smi printed an error instead), so a broken reading never counts as "free".
 */
export function parseGpuApps(stdout: string): GpuApp[] | null {
  const apps: GpuApp[] = [];
  for (const raw of stdout.split('\n')) {
    const line = raw.trim();
    if (!line || /^no running processes found$/i.test(line)) continue;
    const [pid, uuid, mem] = line.split(',').map((s) => s.trim());
    if (!/^\d+$/.test(pid ?? '') || !uuid) return null;
    const m = Number(mem);
    apps.push({ pid: Number(pid), gpuUuid: uuid, usedMiB: Number.isFinite(m) ? m : null });
  }
  return apps;
}

/** Listening TCP sockets, numeric; `-H` is not in every iproute2, so the header is skipped by the parser. */
export const LISTENING_COMMAND = shellCommand(['ss', '-ltn']);

/** The local ports in `ss -ltn` output; null when the output is not that table. */
export function parseListeningPorts(stdout: string): Set<number> | null {
  const lines = stdout.split('\n').filter((l) => l.trim());
  if (lines.length && !/^State\s+Recv-Q/i.test(lines[0]) && !/^LISTEN\s/.test(lines[0])) return null;
  const ports = new Set<number>();
  for (const line of lines) {
    const cols = line.trim().split(/\s+/);
    if (cols[0] !== 'LISTEN') continue;
    // Local address is the 4th column: 0.0.0.0:8998, [::]:8998, *:8998, 127.0.0.1%lo:53.
    const m = /:(\d+)$/.exec(cols[3] ?? '');
    if (m) ports.add(Number(m[1]));
  }
  return ports;
}

export function portOfUrl(url: string): number | null {
  try {
    const u = new URL(url);
    const p = Number(u.port || (u.protocol === 'https:' ? 443 : 80));
    return Number.isInteger(p) && p > 0 ? p : null;
  } catch {
    return null;
  }
}
