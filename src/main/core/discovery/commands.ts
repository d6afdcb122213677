// The systemctl commands whose output discovery reads, built from checked unit names only.

import { assertUnitName, shellCommand } from '../ssh/shell';

/** Every service unit, loaded or not, one per line, no decoration. */
export const LIST_UNITS_COMMAND = 'systemctl list-units --type=service --all --plain --no-legend --no-pager';

/** Properties parseShowExec() reads. */
export const DISCOVERY_SHOW_PROPERTIES = [
  'Id',
  'ActiveState',
  'ExecStart',
  'Environment',
  'EnvironmentFiles',
  'FragmentPath',
  'NeedDaemonReload',
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
