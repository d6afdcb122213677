// The systemctl commands whose output discovery reads, built from checked unit names only.

import { assertUnitName, shellCommand } from '../ssh/shell';

/** Every service unit, loaded or not, one per line, no decoration. */
export const LIST_UNITS_COMMAND = 'systemctl list-units --type=service --all --plain --no-legend --no-pager';

/**
 * Every installed service unit file: `list-units --all` lists only the units systemd has in memory, and a unit
 * that is disabled and stopped is not loaded — yet it is where a stopped server's configuration lives.
 */
export const LIST_UNIT_FILES_COMMAND = 'systemctl list-unit-files --type=service --no-legend --no-pager';

/** Properties parseShowExec() reads. */
export const DISCOVERY_SHOW_PROPERTIES = [
  'Id',
  'ActiveState',
  'ExecStart',
  'Environment',
  'EnvironmentFiles',
  'FragmentPath',
  'NeedDaemonReload',
  'MainPID',
] as const;

/** Units per `systemctl show` call: keeps the command line short and the output bounded. */
export const SHOW_BATCH = 40;

/** One `systemctl show` per batch of at most SHOW_BATCH units; split the output with splitShowBatch(). */
export function discoveryShowCommands(units: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < units.length; i += SHOW_BATCH) {
    out.push(
      shellCommand([
        'systemctl',
        'show',
        '--no-pager',
        `--property=${DISCOVERY_SHOW_PROPERTIES.join(',')}`,
        ...units.slice(i, i + SHOW_BATCH).map(assertUnitName),
      ]),
    );
  }
  return out;
}

/** The unit file and its drop-ins as on disk. */
export function systemctlCatCommand(unit: string): string {
  return shellCommand(['systemctl', 'cat', '--no-pager', assertUnitName(unit)]);
}

const ENV_FILE_PATH = /^\/[A-Za-z0-9._/@+-]{1,500}$/;

/** Reads an EnvironmentFile named by a unit (leading "-" = optional, stripped). Refuses odd paths. */
export function readEnvFileCommand(path: string): string {
  const p = path.replace(/^-/, '');
  if (!ENV_FILE_PATH.test(p) || p.includes('/../')) {
    throw new Error(
      `refusing to read environment file ${JSON.stringify(p)}: only absolute paths made of [A-Za-z0-9._/@+-] without ".." are read`,
    );
  }
  return shellCommand(['cat', '--', p]);
}

/**
 * The process table: pid, parent and the argv joined with spaces (only to recognise a program; the exact words
 * come from /proc/<pid>/cmdline). `ps` of procps-ng, on every distribution a GPU host runs.
 */
export const PROCESS_TABLE_COMMAND = 'ps -e -o pid=,ppid=,args=';

/** Listening TCP sockets, with the owning processes ss may show this user (all of them as root). */
export const LISTENERS_COMMAND = 'ss -ltnpH';

/** An argv is at most ARG_MAX (2 MiB on Linux) but SGLang's is a few kB: read at most this much of each. */
export const CMDLINE_MAX_BYTES = 256 * 1024;

/** Exact argv of processes: NUL-separated words, one "==> FILE <==" header per file when several are read. */
export function cmdlineCommand(pids: readonly number[]): string {
  for (const p of pids)
    if (!Number.isInteger(p) || p <= 0)
      throw new Error(`refusing to read /proc/${String(p)}/cmdline: not a pid`);
  return shellCommand([
    'head',
    '-c',
    String(CMDLINE_MAX_BYTES),
    '--',
    ...pids.map((p) => `/proc/${p}/cmdline`),
  ]);
}

/** A wrapper script named by ExecStart is read up to this size: its `exec` line is near the top. */
export const SCRIPT_MAX_BYTES = 64 * 1024;

/** Reads the start of a wrapper script named by a unit's ExecStart. Refuses odd paths, as for env files. */
export function readScriptCommand(path: string): string {
  if (!ENV_FILE_PATH.test(path) || path.includes('/../'))
    throw new Error(
      `refusing to read script ${JSON.stringify(path)}: only absolute paths made of [A-Za-z0-9._/@+-] without ".." are read`,
    );
  return shellCommand(['head', '-c', String(SCRIPT_MAX_BYTES), '--', path]);
}
