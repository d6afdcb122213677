// Who holds a worker's GPUs, read on the running worker before anything is stopped: the compute processes
// nvidia-smi lists on each unit's GPUs against that unit's own processes (its MainPID and descendants, from the
// host's process table — a multi-node worker has one unit per host, each checked on its host). Another
// process there means stopping the worker frees nothing, so the roll says it before any outage instead of
// stopping the worker and then waiting in vain for "GPUs free". What cannot be read (nvidia-smi missing or
// refusing, a process table that hides the unit, a container whose processes are not the unit's descendants)
// is said so, for the operator to roll without the check or not; an answer that is not what the command prints
// fails at once and is quoted.
import type { RollUnit, RollWorker } from '@shared/contract';
import { PROCESS_TABLE_COMMAND } from '../discovery/commands';
import { parsePs, processTree, type HostProcess } from '../discovery/host-processes';
import { CONTAINERS } from '../discovery/sglang-command';
import type { ExecOptions, ExecResult } from '../ssh/connection';
import { firstLineExcerpt, outputExcerpt } from '../ssh/output-excerpt';
import { gpuAppsCommand, parseGpuApps, type GpuApp } from './roll-commands';
import { followShowCommand, parseUnitSnapshot, UnitShowError, type UnitSnapshot } from './unit-commands';
import { isLinkError } from './wait';

/** What the three commands answered for one unit; an Error where the command could not be run at all. */
export interface GpuOwnersReading {
  unit: RollUnit;
  /** `nvidia-smi --query-compute-apps=… -i GPUS` */
  apps: ExecResult | Error;
  /** `systemctl show` of the unit (MainPID, states). */
  show: ExecResult | Error;
  /** `ps -e -o pid=,ppid=,args=`, the host's process table (the same read discovery makes). */
  ps: ExecResult | Error;
}

export type GpuOwners =
  /** Only the unit's own processes (or none) on its GPUs: stopping it frees them. */
  | { kind: 'own'; detail: string }
  /** Another process is on them: stopping the unit frees nothing. */
  | { kind: 'foreign'; detail: string; hint: string }
  /** Could not be read; the operator may roll without the check. */
  | { kind: 'unreadable'; detail: string }
  /** An answer that is not what the command prints: the check fails at once. */
  | { kind: 'garbage'; detail: string };

const EXEC: ExecOptions = { timeoutMs: 15_000, maxBytes: 256 * 1024 };
/** A process table with long command lines; above this the check says it could not read it. */
const PS_EXEC: ExecOptions = { timeoutMs: 15_000, maxBytes: 8 * 1024 * 1024 };
/** Foreign processes named in a message; the rest are counted. */
const NAMED = 5;

interface Exec {
  exec(command: string, options?: ExecOptions): Promise<ExecResult>;
}

/** A host's link as the plan reads it (an SshConnection, a roll's link). */
interface HostLink extends Exec {
  readonly isConnected: boolean;
}

/**
 * Reads the unit's GPU processes, its MainPID and the host's process table, at once: whatever the order the
 * answers come in, a process of the unit can only look unreadable (a pid the table does not show yet), never
 * foreign — that takes a pid the same table shows outside the unit's tree. `psOf` shares one process table
 * among the units of one host. A failed command is kept as its Error; a dropped link throws.
 */
export async function readGpuOwners(
  link: Exec,
  unit: RollUnit,
  isLinkError: (err: unknown) => boolean,
  psOf?: () => Promise<ExecResult | Error>,
): Promise<GpuOwnersReading> {
  const run = async (command: string, opts: ExecOptions): Promise<ExecResult | Error> => {
    try {
      return await link.exec(command, opts);
    } catch (err) {
      if (isLinkError(err)) throw err;
      return err instanceof Error ? err : new Error(String(err));
    }
  };
  const [apps, show, ps] = await Promise.all([
    run(gpuAppsCommand(unit.gpus), EXEC),
    run(followShowCommand(unit.unit), EXEC),
    psOf ? psOf() : run(PROCESS_TABLE_COMMAND, PS_EXEC),
  ]);
  return { unit, apps, show, ps };
}

/** One process table per host for a plan's units (read once, on first need). */
export function processTableOnce(
  link: Exec,
  isLinkError: (err: unknown) => boolean,
): () => Promise<ExecResult | Error> {
  let table: Promise<ExecResult | Error> | null = null;
  return () =>
    (table ??= link.exec(PROCESS_TABLE_COMMAND, PS_EXEC).catch((err: unknown) => {
      if (isLinkError(err)) {
        table = null;
        throw err;
      }
      return err instanceof Error ? err : new Error(String(err));
    }));
}

/**
 * Who holds the GPUs of each unit of the planned workers (by unitKey), read over each host's link: every host
 * and unit at once, one process table per host. Never throws: a unit
 * whose host cannot be asked is unreadable, with the reason.
 */
export async function readPlanGpuOwners(
  planned: ReadonlyArray<{ workerId: string }>,
  workers: readonly RollWorker[],
  links: ReadonlyMap<string, HostLink>,
): Promise<Map<string, GpuOwners>> {
  const byHost = new Map<string, RollUnit[]>();
  for (const p of planned)
    for (const u of workers.find((w) => w.id === p.workerId)?.units ?? [])
      if (u.gpus.length) byHost.set(u.hostId, [...(byHost.get(u.hostId) ?? []), u]);
  const out = new Map<string, GpuOwners>();
  await Promise.all(
    [...byHost].map(async ([hostId, units]) => {
      const conn = links.get(hostId);
      if (!conn) {
        for (const u of units)
          out.set(unitKey(u), { kind: 'unreadable', detail: `no SSH link to ${u.hostLabel}` });
        return;
      }
      const linkDown = (err: unknown) => isLinkError(err, conn);
      const psOf = processTableOnce(conn, linkDown);
      // The link bounds its own channels (SshConnection's maxChannels): the units' reads queue there.
      await Promise.all(
        units.map(async (u) => {
          try {
            out.set(unitKey(u), judgeGpuOwners(await readGpuOwners(conn, u, linkDown, psOf)));
          } catch (err) {
            out.set(unitKey(u), {
              kind: 'unreadable',
              detail: `the link to ${u.hostLabel} dropped while reading who holds GPUs ${u.gpus.join(',')}: ${(err as Error).message}`,
            });
          }
        }),
      );
    }),
  );
  return out;
}

function said(r: ExecResult): string {
  const text = firstLineExcerpt(r.stderr || r.stdout);
  return `exit ${r.exitCode ?? r.signal ?? '?'}${text ? `: ${text}` : ''}`;
}

const NOT_FOUND = /command not found|No such file or directory|: not found$/m;

/** The decision, from what was read. Pure. */
export function judgeGpuOwners(r: GpuOwnersReading): GpuOwners {
  const u = r.unit;
  const host = u.hostLabel;
  const where = `GPU${u.gpus.length > 1 ? 's' : ''} ${u.gpus.join(',')} of ${host}`;

  // Answers that are not what the command prints fail at once, whatever else was read.
  let apps: GpuApp[] | null = null;
  let appsProblem: string | null = null;
  if (r.apps instanceof Error)
    appsProblem = `nvidia-smi could not be run on ${host}: ${firstLineExcerpt(r.apps.message)}`;
  else if (r.apps.exitCode === 127 || (r.apps.exitCode !== 0 && NOT_FOUND.test(r.apps.stderr)))
    appsProblem = `nvidia-smi is not installed on ${host} or not on the SSH user's PATH (${said(r.apps)})`;
  else if (r.apps.exitCode !== 0)
    appsProblem = `nvidia-smi on ${host} did not list the compute processes (${said(r.apps)})`;
  else {
    apps = parseGpuApps(r.apps.stdout);
    if (!apps)
      return {
        kind: 'garbage',
        detail: `nvidia-smi --query-compute-apps on ${host} answered something that is not its CSV table: ${outputExcerpt(r.apps.stdout)}`,
      };
  }
  let snap: UnitSnapshot | null = null;
  let showProblem: string | null = null;
  if (r.show instanceof Error)
    showProblem = `systemctl show ${u.unit} could not be run on ${host}: ${firstLineExcerpt(r.show.message)}`;
  else if (r.show.exitCode !== 0)
    showProblem = `systemctl show ${u.unit} failed on ${host} (${said(r.show)})`;
  else {
    try {
      snap = parseUnitSnapshot(r.show.stdout, u.unit);
    } catch (err) {
      if (!(err instanceof UnitShowError)) throw err;
      return {
        kind: 'garbage',
        detail: `systemctl show ${u.unit} on ${host} answered without ActiveState/LoadState: ${outputExcerpt(r.show.stdout)}`,
      };
    }
    if (snap.loadState === 'not-found') showProblem = `systemd on ${host} has no unit ${u.unit}`;
  }
  let procs: Map<number, HostProcess> | null = null;
  let psProblem: string | null = null;
  if (r.ps instanceof Error)
    psProblem = `the process table of ${host} could not be read: ${firstLineExcerpt(r.ps.message)}`;
  else if (r.ps.exitCode !== 0) psProblem = `\`${PROCESS_TABLE_COMMAND}\` failed on ${host} (${said(r.ps)})`;
  else {
    procs = parsePs(r.ps.stdout);
    if (procs.size === 0 && r.ps.stdout.trim())
      return {
        kind: 'garbage',
        detail: `\`${PROCESS_TABLE_COMMAND}\` on ${host} answered something that is not a process table: ${outputExcerpt(r.ps.stdout)}`,
      };
  }

  if (!apps) return { kind: 'unreadable', detail: appsProblem! };
  if (!apps.length) return { kind: 'own', detail: `no compute process on ${where} now` };
  if (!snap) return { kind: 'unreadable', detail: showProblem! };
  if (showProblem) return { kind: 'unreadable', detail: showProblem };
  if (!procs) return { kind: 'unreadable', detail: psProblem! };

  const mainPid = snap.mainPid;
  if (mainPid > 0 && !procs.has(mainPid))
    return {
      kind: 'unreadable',
      detail: `the process table of ${host} does not show ${u.unit}'s MainPID ${mainPid}: this user cannot see its processes (/proc mounted with hidepid) or it runs in another PID namespace`,
    };
  const own = new Set(mainPid > 0 ? processTree(mainPid, procs).filter((p) => procs.has(p)) : []);
  const strangers = [...new Set(apps.map((a) => a.pid))].filter((p) => !own.has(p));
  const ownText = `${u.unit} (MainPID ${mainPid}${own.size > 1 ? ` and its ${own.size - 1} descendant${own.size > 2 ? 's' : ''}` : ''})`;
  if (!strangers.length) {
    const pids = [...new Set(apps.map((a) => a.pid))];
    return {
      kind: 'own',
      detail: `${where} run only processes of ${ownText}: pid ${pids.slice(0, NAMED).join(', ')}${pids.length > NAMED ? ` and ${pids.length - NAMED} more` : ''}`,
    };
  }
  const container = [...own].map((p) => programOf(procs.get(p)!)).find((prog) => CONTAINERS.has(prog));
  if (container)
    return {
      kind: 'unreadable',
      detail: `${u.unit} on ${host} runs a container (${container}): its processes are not descendants of the unit's MainPID on the host, so it cannot be told whose processes hold ${where}`,
    };
  const seen = strangers.filter((p) => procs.has(p));
  if (!seen.length)
    return {
      kind: 'unreadable',
      detail: `nvidia-smi lists pid ${strangers.join(', ')} on ${where}, which the process table of ${host} does not show: it ended meanwhile (plan again), or this user cannot see it`,
    };
  const mib = new Map<number, number>();
  for (const a of apps)
    if (a.usedMiB !== null && seen.includes(a.pid)) mib.set(a.pid, (mib.get(a.pid) ?? 0) + a.usedMiB);
  const named = seen
    .slice(0, NAMED)
    .map((p) => {
      const m = mib.get(p);
      return `pid ${p} (${[programOf(procs.get(p)!), m !== undefined ? `${m} MiB` : ''].filter(Boolean).join(', ')})`;
    })
    .join(', ');
  const more = seen.length > NAMED ? ` and ${seen.length - NAMED} more` : '';
  const whose =
    mainPid > 0 ? `not a process of ${ownText}` : `while ${u.unit} runs no process (${snap.activeState})`;
  return {
    kind: 'foreign',
    detail: `${where} run ${named}${more}, ${whose}`,
    hint: `End ${seen.length > 1 ? 'those processes' : `pid ${seen[0]}`} on ${host} (\`ps -o pid,user,args -p ${seen.slice(0, NAMED).join(',')}\` shows whose) or move ${seen.length > 1 ? 'them' : 'it'} to other GPUs, then plan again.`,
  };
}

/** The program a process runs, by name only (its arguments may carry secrets), made safe to print. */
function programOf(p: HostProcess): string {
  const first = p.joined.trim().split(/\s+/)[0] ?? '';
  const base = first.slice(first.lastIndexOf('/') + 1).replace(/:$/, '');
  return firstLineExcerpt(base, 40) || '?';
}

/** A unit of a worker, as the GPU check's readings are keyed. */
export function unitKey(u: { hostId: string; unit: string }): string {
  return `${u.hostId}\u0000${u.unit}`;
}
