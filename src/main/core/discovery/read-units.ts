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
  const [list, files] = await Promise.all([
    conn.exec(LIST_UNITS_COMMAND, { timeoutMs: 20_000, maxBytes: 4 * 1024 * 1024 }),
    conn.exec(LIST_UNIT_FILES_COMMAND, { timeoutMs: 20_000, maxBytes: 4 * 1024 * 1024 }),
  ]);
  if (list.exitCode !== 0)
    throw new Error(
      `discovery on ${hostLabel}: \`${LIST_UNITS_COMMAND}\` failed (exit ${list.exitCode}): ${list.stderr.trim().slice(0, 300)}`,
    );
  const loaded = parseListUnits(list.stdout)
    .filter((u) => u.load !== 'not-found')
    .map((u) => u.unit);
  // Without the unit files only the loaded units are seen: enough for what runs.
  const installed = files.exitCode === 0 ? parseListUnitFiles(files.stdout) : [];
  return { names: [...new Set([...loaded, ...installed])], listing: list.stdout };
}

function firstLine(text: string): string {
  return text.trim().split('\n')[0]?.slice(0, 300) ?? '';
}

/**
 * Reads a host's units in a few rounds of commands that run side by side (the link's channel budget orders
 * them): the unit lists, the process table and the listeners; then every unit's show block; then what the
 * candidates need — the argv of their processes, their unit files, EnvironmentFiles and wrapper scripts.
 */
export async function readUnits(
  conn: Exec,
  hostLabel: string,
  mentions: RegExp,
  opts: { listeners?: boolean; only?: readonly string[] } = {},
): Promise<HostReading> {
  const [listed, ps, ss] = await Promise.all([
    opts.only ? { names: [...opts.only], listing: '' } : listServiceUnits(conn, hostLabel),
    conn.exec(PROCESS_TABLE_COMMAND, { timeoutMs: 15_000, maxBytes: 16 * 1024 * 1024 }),
    opts.listeners ? conn.exec(LISTENERS_COMMAND, { timeoutMs: 10_000, maxBytes: 4 * 1024 * 1024 }) : null,
  ]);
  const out: HostReading = { listUnits: listed.listing, units: [] };
  const procs = ps.exitCode === 0 ? parsePs(ps.stdout) : null;
  if (!procs)
    out.processesError = `\`${PROCESS_TABLE_COMMAND}\` failed on ${hostLabel} (exit ${ps.exitCode}): ${firstLine(ps.stderr) || 'no output'}`;
  if (ss && ss.exitCode === 0) out.listeners = parseListeners(ss.stdout);
  else if (ss)
    out.listenersError = `\`${LISTENERS_COMMAND}\` failed on ${hostLabel} (exit ${ss.exitCode}): ${firstLine(ss.stderr) || 'no output'}`;

  const shows = new Map<string, string>();
  const showAnswers = await Promise.all(
    discoveryShowCommands(listed.names).map((cmd) =>
      conn.exec(cmd, { timeoutMs: 20_000, maxBytes: 8 * 1024 * 1024 }),
    ),
  );
  for (const r of showAnswers) for (const [unit, block] of splitShowBatch(r.stdout)) shows.set(unit, block);

  // Candidates: what the unit is configured to run mentions the program, or something it runs does.
  const trees = new Map<string, number[]>();
  const candidates: string[] = [];
  for (const unit of listed.names) {
    const show = shows.get(unit);
    if (!show) continue;
    const mainPid = parseShowExec(show).mainPid ?? 0;
    const tree = procs && mainPid > 0 ? processTree(mainPid, procs).filter((p) => procs.has(p)) : [];
    const hits = tree.filter((p) => mentions.test(procs?.get(p)?.joined ?? ''));
    if (hits.length > 0) trees.set(unit, hits);
    if (hits.length > 0 || mentions.test(show)) candidates.push(unit);
  }

  const pids = [...new Set([...trees.values()].flat())];
  const batches: number[][] = [];
  for (let i = 0; i < pids.length; i += CMDLINE_BATCH) batches.push(pids.slice(i, i + CMDLINE_BATCH));
  const [argvs, readings] = await Promise.all([
    Promise.all(
      batches.map(async (batch) => {
        const r = await conn.exec(cmdlineCommand(batch), { timeoutMs: 15_000, maxBytes: 8 * 1024 * 1024 });
        return parseCmdlines(r.stdout, batch);
      }),
    ).then((maps) => new Map(maps.flatMap((m) => [...m]))),
    Promise.all(candidates.map((unit) => readUnitFiles(conn, unit, shows.get(unit) as string))),
  ]);
  for (const reading of readings) {
    reading.processes = (trees.get(reading.unit) ?? []).flatMap((pid) => {
      const argv = argvs.get(pid);
      return argv && argv.length > 0 ? [{ pid, argv }] : [];
    });
    // A wrapper script says what would run only when nothing runs; what runs says it better.
    if (reading.processes.length > 0) reading.scripts = {};
    out.units.push(reading);
  }
  return out;
}

/** One candidate unit's files: `systemctl cat`, its EnvironmentFiles, and the wrapper scripts ExecStart names. */
async function readUnitFiles(conn: Exec, unit: string, show: string): Promise<UnitReading> {
  const reading: UnitReading = { unit, show, envFiles: {}, envFileErrors: {}, processes: [], scripts: {} };
  const cat = await conn.exec(systemctlCatCommand(unit), { timeoutMs: 10_000, maxBytes: 1024 * 1024 });
  if (cat.exitCode === 0) reading.cat = cat.stdout;
  else reading.catError = firstLine(cat.stderr) || `exit ${cat.exitCode}`;
  const parsedCat = reading.cat !== undefined ? parseUnitCat(reading.cat, unit) : undefined;
  const envPaths = [
    ...new Set([...parseShowExec(show).environmentFiles, ...(parsedCat?.environmentFiles ?? [])]),
  ].map((f) => f.replace(/^-/, ''));
  await Promise.all([
    ...envPaths.map(async (path) => {
      let command: string;
      try {
        command = readEnvFileCommand(path);
      } catch (err) {
        reading.envFileErrors[path] = (err as Error).message;
        return;
      }
      const r = await conn.exec(command, { timeoutMs: 10_000, maxBytes: 256 * 1024 });
      if (r.exitCode === 0) reading.envFiles[path] = r.stdout;
      else reading.envFileErrors[path] = firstLine(r.stderr) || `exit ${r.exitCode}`;
    }),
    ...wrapperScriptPaths(parsedCat).map(async (path) => {
      let command: string;
      try {
        command = readScriptCommand(path);
      } catch {
        return;
      }
      const r = await conn.exec(command, { timeoutMs: 10_000, maxBytes: SCRIPT_MAX_BYTES + 1024 });
      if (r.exitCode === 0) reading.scripts[path] = r.stdout;
    }),
  ]);
  return reading;
}
