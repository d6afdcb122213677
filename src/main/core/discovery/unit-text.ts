// Reading what systemctl prints about units: `list-units`, `cat UNIT` (unit file plus drop-ins) and
// `show -p Id,ExecStart,Environment,…`. Only what discovery needs: the service's command lines and environment.

import { expandSpecifiers, splitExecLine } from './exec-words';

export interface ListedUnit {
  unit: string;
  load: string;
  active: string;
  sub: string;
  description: string;
}

/**
 * Parses `systemctl list-units --type=service --all --plain --no-legend --no-pager`. Tolerates the "●" marker
 * some systemd versions still print for failed or not-found units, and ignores non-.service lines.
 */
export function parseListUnits(text: string): ListedUnit[] {
  const out: ListedUnit[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/^\s*[●*×]\s*/, '').trim();
    if (line === '') continue;
    const m = /^(\S+\.service)\s+(\S+)\s+(\S+)\s+(\S+)\s*(.*)$/.exec(line);
    if (!m) continue;
    out.push({ unit: m[1], load: m[2], active: m[3], sub: m[4], description: m[5] });
  }
  return out;
}

/**
 * Parses `systemctl list-unit-files --type=service --no-legend --no-pager` ("NAME STATE [PRESET]") into unit
 * names. Templates (`name@.service`) are left out: only their instances run, and those are in list-units.
 */
export function parseListUnitFiles(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const m = /^\s*(\S+\.service)\s+(\S+)/.exec(raw);
    if (!m || m[1].endsWith('@.service') || m[2] === 'masked') continue;
    out.push(m[1]);
  }
  return out;
}

/** The service-relevant content of a unit as systemd would apply it. */
export interface UnitExec {
  /** ExecStart command lines in effect (after drop-in resets), specifiers resolved. */
  execStart: string[];
  /** Environment= assignments in effect (later wins). */
  environment: Record<string, string>;
  /** EnvironmentFile= paths (a leading "-" means optional), which discovery cannot read itself. */
  environmentFiles: string[];
  /** Files the text came from, in order (unit file first, then drop-ins). */
  files: string[];
  /** `systemctl cat` warned that the file changed on disk since the last daemon-reload. */
  changedOnDisk: boolean;
  /** Problems met while reading (unparseable Environment= words…). */
  problems: string[];
  /** ActiveState= when the text was `systemctl show` output that included it. */
  activeState?: string;
  /** MainPID= from `systemctl show` (0 when nothing runs). */
  mainPid?: number;
  /**
   * ExecStart's argv[] as `systemctl show` prints it: the words joined with plain spaces, never quoted, so it
   * tells what a unit mentions but can never be split back into words (discovery reads /proc or the unit file).
   */
  shownArgv?: string[];
}

/**
 * Parses `systemctl cat UNIT`: "# /path" headers separate the unit file and its drop-ins, applied in order.
 * Within [Service]: a backslash at the end of a line continues it (comment lines inside are skipped), an
 * empty `ExecStart=` or `Environment=` resets what earlier files set, %-specifiers are resolved for `unit`.
 */
export function parseUnitCat(text: string, unit: string): UnitExec {
  const res: UnitExec = {
    execStart: [],
    environment: {},
    environmentFiles: [],
    files: [],
    changedOnDisk: false,
    problems: [],
  };
  let section = '';
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i].trim();
    const header = /^#\s+(\/\S+)\s*$/.exec(line);
    if (header) {
      res.files.push(header[1]);
      section = '';
      continue;
    }
    if (/^#\s*Warning:.*changed on disk/i.test(line)) {
      res.changedOnDisk = true;
      continue;
    }
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    while (line.endsWith('\\') && i + 1 < lines.length) {
      line = line.slice(0, -1);
      i++;
      const next = lines[i].trim();
      if (next.startsWith('#') || next.startsWith(';')) {
        line += '\\';
        continue;
      }
      line += ` ${next}`;
    }
    if (line.endsWith('\\')) line = line.slice(0, -1);
    const sec = /^\[(.+)\]$/.exec(line);
    if (sec) {
      section = sec[1];
      continue;
    }
    if (section !== 'Service') continue;
    const eq = line.indexOf('=');
    if (eq <= 0) continue;
    const key = line.slice(0, eq).trim();
    const value = expandSpecifiers(line.slice(eq + 1).trim(), unit);
    applyServiceKey(res, key, value);
  }
  return res;
}

function applyServiceKey(res: UnitExec, key: string, value: string): void {
  if (key === 'ExecStart') {
    if (value === '') res.execStart = [];
    else res.execStart.push(value);
  } else if (key === 'Environment') {
    if (value === '') {
      res.environment = {};
      return;
    }
    addAssignments(res, value);
  } else if (key === 'EnvironmentFile') {
    if (value === '') res.environmentFiles = [];
    else res.environmentFiles.push(value);
  }
}

function addAssignments(res: UnitExec, value: string): void {
  const { argv, error } = splitExecLine(value);
  if (error) res.problems.push(`Environment=${value}: ${error}`);
  for (const word of argv) {
    const eq = word.indexOf('=');
    if (eq <= 0) {
      res.problems.push(`Environment= word ${JSON.stringify(word)} is not NAME=value`);
      continue;
    }
    res.environment[word.slice(0, eq)] = word.slice(eq + 1);
  }
}

/**
 * Splits the output of one `systemctl show -p Id,… UNIT…` call into per-unit blocks (blank-line separated),
 * keyed by Id= when present, else by the order of `units`.
 */
export function splitShowBatch(text: string, units: readonly string[] = []): Map<string, string> {
  const out = new Map<string, string>();
  const blocks = text.split(/\r?\n\s*\r?\n/).filter((b) => b.trim() !== '');
  blocks.forEach((block, i) => {
    const id = /^Id=(.+)$/m.exec(block)?.[1]?.trim() ?? units[i];
    if (id) out.set(id, block);
  });
  return out;
}

/**
 * Parses one unit's `systemctl show -p ExecStart,Environment,EnvironmentFiles,MainPID…` block. systemd prints
 * ExecStart as `{ path=… ; argv[]=WORD… ; ignore_errors=no ; … }` with specifiers resolved and the words joined
 * by spaces, unquoted (`shownArgv`); Environment as space-separated (quoted when needed) NAME=value words;
 * EnvironmentFiles as "path (ignore_errors=…)".
 */
export function parseShowExec(text: string): UnitExec {
  const res: UnitExec = {
    execStart: [],
    environment: {},
    environmentFiles: [],
    files: [],
    changedOnDisk: false,
    problems: [],
  };
  for (const raw of text.split(/\r?\n/)) {
    const eq = raw.indexOf('=');
    if (eq <= 0) continue;
    const key = raw.slice(0, eq);
    const value = raw.slice(eq + 1);
    if (key === 'ExecStart' || key === 'ExecStartEx') {
      res.shownArgv ??= [];
      if (key === 'ExecStartEx' && res.shownArgv.length > 0) continue;
      for (const m of value.matchAll(/argv\[\]=(.*?) ; (?:ignore_errors|flags)=/g)) res.shownArgv.push(m[1]);
      if (value.trim() !== '' && !value.includes('argv[]='))
        res.problems.push(`ExecStart not in { argv[]=… } form: ${value}`);
    } else if (key === 'Environment') {
      if (value.trim() !== '') addAssignments(res, value);
    } else if (key === 'EnvironmentFiles') {
      const path = /^(\S+)/.exec(value.trim())?.[1];
      if (path) {
        const optional = /ignore_errors=yes/.test(value);
        res.environmentFiles.push(optional ? `-${path}` : path);
      }
    } else if (key === 'FragmentPath' && value.trim() !== '') {
      res.files.push(value.trim());
    } else if (key === 'ActiveState' && value.trim() !== '') {
      res.activeState = value.trim();
    } else if (key === 'MainPID' && /^\d+$/.test(value.trim())) {
      res.mainPid = Number(value.trim());
    } else if (key === 'NeedDaemonReload' && value.trim() === 'yes') {
      res.changedOnDisk = true;
    }
  }
  return res;
}

/** Parses an EnvironmentFile (KEY=value lines, # comments, optional quotes, `export ` tolerated). */
export function parseEnvFile(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim().replace(/^export\s+/, '');
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const m = /^([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line);
    if (!m) continue;
    let v = m[2];
    if ((v.startsWith('"') && v.endsWith('"')) || (v.startsWith("'") && v.endsWith("'"))) v = v.slice(1, -1);
    env[m[1]] = v;
  }
  return env;
}
