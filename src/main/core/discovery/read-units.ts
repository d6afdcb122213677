// Reads, over one SSH link, what a host's systemd and kernel say about the units that run a given kind of program
// (SGLang's servers and routers; Prometheus-compatible engines): every unit's `systemctl show`, the process table,
// and — for the units whose configuration or running processes mention the program — `systemctl cat`, their
// EnvironmentFiles, the exact argv of their processes and, when nothing runs, the wrapper script their ExecStart
// names. A host with hundreds of services costs a handful of commands. What cannot be read is kept with the
// reason, so the findings can say what they could not see instead of guessing.
import {
  cmdlineCommand,
  discoveryShowCommands,
  LIST_UNIT_FILES_COMMAND,
  LIST_UNITS_COMMAND,
  LISTENERS_COMMAND,
  PROCESS_TABLE_COMMAND,
  readEnvFileCommand,
  readScriptCommand,
  SCRIPT_MAX_BYTES,
  systemctlCatCommand,
} from './commands';
import { parseCmdlines, parseListeners, parsePs, processTree, type Listener } from './host-processes';
import { wrapperScriptPaths, type ProcessArgv, type UnitEvidence } from './unit-command';
import { parseListUnitFiles, parseListUnits, parseShowExec, parseUnitCat, splitShowBatch } from './unit-text';

export interface Exec {
  exec(
    command: string,
    opts?: { timeoutMs?: number; maxBytes?: number },
  ): Promise<{
    stdout: string;
    stderr: string;
    exitCode: number | null;
  }>;
}

/** One unit as read: its show block always, the rest as far as it could be read (with the reasons). */
export type UnitReading = UnitEvidence & {
  show: string;
  envFiles: Record<string, string>;
  envFileErrors: Record<string, string>;
  processes: ProcessArgv[];
  scripts: Record<string, string>;
};

export interface HostReading {
  /** `systemctl list-units` output. */
  listUnits: string;
  units: UnitReading[];
  /** Why running processes could not be read (then only unit files speak). */
  processesError?: string;
  listeners?: Listener[];
  listenersError?: string;
}

const CMDLINE_BATCH = 64;

/**
 * Every service unit systemd has loaded, and every installed unit file (a stopped, disabled unit is only there),
 * with what list-units printed (discovery reads the units' states from it).
 */
async function listServiceUnits(
  conn: Exec,
  hostLabel: string,
): Promise<{ names: string[]; listing: string }> {
  const list = await conn.exec(LIST_UNITS_COMMAND, { timeoutMs: 20_000, maxBytes: 4 * 1024 * 1024 });
  if (list.exitCode !== 0)
    throw new Error(
      `discovery on ${hostLabel}: \`${LIST_UNITS_COMMAND}\` failed (exit ${list.exitCode}): ${list.stderr.trim().slice(0, 300)}`,
    );
  const loaded = parseListUnits(list.stdout)
    .filter((u) => u.load !== 'not-found')
    .map((u) => u.unit);
  const files = await conn.exec(LIST_UNIT_FILES_COMMAND, { timeoutMs: 20_000, maxBytes: 4 * 1024 * 1024 });
  // Without the unit files only the loaded units are seen: enough for what runs.
  const installed = files.exitCode === 0 ? parseListUnitFiles(files.stdout) : [];
  return { names: [...new Set([...loaded, ...installed])], listing: list.stdout };
}

function firstLine(text: string): string {
  return text.trim().split('\n')[0]?.slice(0, 300) ?? '';
}

export async function readUnits(
  conn: Exec,
  hostLabel: string,
  mentions: RegExp,
  opts: { listeners?: boolean; only?: readonly string[] } = {},
): Promise<HostReading> {
  const listed = opts.only ? { names: [...opts.only], listing: '' } : await listServiceUnits(conn, hostLabel);
  const unitNames = listed.names;
  const shows = new Map<string, string>();
  for (const cmd of discoveryShowCommands(unitNames)) {
    const r = await conn.exec(cmd, { timeoutMs: 20_000, maxBytes: 8 * 1024 * 1024 });
    for (const [unit, block] of splitShowBatch(r.stdout)) shows.set(unit, block);
  }

  const out: HostReading = { listUnits: listed.listing, units: [] };
  const ps = await conn.exec(PROCESS_TABLE_COMMAND, { timeoutMs: 15_000, maxBytes: 16 * 1024 * 1024 });
  const procs = ps.exitCode === 0 ? parsePs(ps.stdout) : null;
  if (!procs)
    out.processesError = `\`${PROCESS_TABLE_COMMAND}\` failed on ${hostLabel} (exit ${ps.exitCode}): ${firstLine(ps.stderr) || 'no output'}`;

  // Candidates: what the unit is configured to run mentions the program, or something it runs does.
  const trees = new Map<string, number[]>();
  const candidates: string[] = [];
  for (const unit of unitNames) {
    const show = shows.get(unit);
    if (!show) continue;
    const mainPid = parseShowExec(show).mainPid ?? 0;
    const tree = procs && mainPid > 0 ? processTree(mainPid, procs).filter((p) => procs.has(p)) : [];
    const hits = tree.filter((p) => mentions.test(procs?.get(p)?.joined ?? ''));
    if (hits.length > 0) trees.set(unit, hits);
    if (hits.length > 0 || mentions.test(show)) candidates.push(unit);
  }

  const argvs = new Map<number, string[]>();
  const pids = [...new Set([...trees.values()].flat())];
  for (let i = 0; i < pids.length; i += CMDLINE_BATCH) {
    const batch = pids.slice(i, i + CMDLINE_BATCH);
    const r = await conn.exec(cmdlineCommand(batch), { timeoutMs: 15_000, maxBytes: 8 * 1024 * 1024 });
    for (const [pid, argv] of parseCmdlines(r.stdout, batch)) argvs.set(pid, argv);
  }

  for (const unit of candidates) {
    const show = shows.get(unit) as string;
    const reading: UnitReading = {
      unit,
      show,
      envFiles: {},
      envFileErrors: {},
      processes: (trees.get(unit) ?? []).flatMap((pid) => {
        const argv = argvs.get(pid);
        return argv && argv.length > 0 ? [{ pid, argv }] : [];
      }),
      scripts: {},
    };
    const cat = await conn.exec(systemctlCatCommand(unit), { timeoutMs: 10_000, maxBytes: 1024 * 1024 });
    if (cat.exitCode === 0) reading.cat = cat.stdout;
    else reading.catError = firstLine(cat.stderr) || `exit ${cat.exitCode}`;
    const parsedCat = reading.cat !== undefined ? parseUnitCat(reading.cat, unit) : undefined;
    const files = new Set([...parseShowExec(show).environmentFiles, ...(parsedCat?.environmentFiles ?? [])]);
    for (const f of files) {
      const path = f.replace(/^-/, '');
      let command: string;
      try {
        command = readEnvFileCommand(path);
      } catch (err) {
        reading.envFileErrors[path] = (err as Error).message;
        continue;
      }
      const r = await conn.exec(command, { timeoutMs: 10_000, maxBytes: 256 * 1024 });
      if (r.exitCode === 0) reading.envFiles[path] = r.stdout;
      else reading.envFileErrors[path] = firstLine(r.stderr) || `exit ${r.exitCode}`;
    }
    if (reading.processes.length === 0) {
      for (const path of wrapperScriptPaths(parsedCat)) {
        let command: string;
        try {
          command = readScriptCommand(path);
        } catch {
          continue;
        }
        const r = await conn.exec(command, { timeoutMs: 10_000, maxBytes: SCRIPT_MAX_BYTES + 1024 });
        if (r.exitCode === 0) reading.scripts[path] = r.stdout;
      }
    }
    out.units.push(reading);
  }

  if (opts.listeners) {
    const ss = await conn.exec(LISTENERS_COMMAND, { timeoutMs: 10_000, maxBytes: 4 * 1024 * 1024 });
    if (ss.exitCode === 0) out.listeners = parseListeners(ss.stdout);
    else
      out.listenersError = `\`${LISTENERS_COMMAND}\` failed on ${hostLabel} (exit ${ss.exitCode}): ${firstLine(ss.stderr) || 'no output'}`;
  }
  return out;
}
