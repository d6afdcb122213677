// The exact commands a restart sends, and what systemd answers. Unit names come only from the configured
// deployment and pass assertUnitName; every command line is built by shellCommand.
//
// `--no-block` matters: a plain `systemctl restart` waits for the start job, which for a unit that stays
// "activating" while the model loads can take half an hour and holds an SSH channel that a link drop would
// kill. With --no-block systemctl only queues the job (still reporting "unit not found" and sudo refusals at
// once), and the restart is followed by polling `systemctl show`, which survives reconnects.
import { assertUnitName, shellCommand } from '../ssh/shell';

export type Privilege = 'root' | 'sudo' | 'polkit';

export const DEFAULT_SYSTEMCTL = '/usr/bin/systemctl';

export function restartArgv(unit: string, privilege: Privilege): string[] {
  const argv = ['systemctl', '--no-block', 'restart', assertUnitName(unit)];
  return privilege === 'sudo' ? ['sudo', '-n', ...argv] : argv;
}

export function restartCommand(unit: string, privilege: Privilege): string {
  return shellCommand(restartArgv(unit, privilege));
}

/**
 * One sudoers line allowing exactly these restarts without a password (sudo matches the arguments exactly,
 * so nothing else becomes possible). sudo resolves `systemctl` to a full path, hence the path here.
 */
export function sudoersLine(
  user: string,
  units: readonly string[],
  systemctlPath = DEFAULT_SYSTEMCTL,
): string {
  const cmds = units.map((u) => `${systemctlPath} --no-block restart ${assertUnitName(u)}`);
  return `${user} ALL=(root) NOPASSWD: ${cmds.join(', ')}`;
}

/** Who we are on the host and where systemctl lives: asked once per connection. */
export const IDENTITY_COMMAND = [
  shellCommand(['id', '-u']),
  // `-u -n` rather than `-un`: the same on every id(1), and parsers of combined flags differ.
  shellCommand(['id', '-u', '-n']),
  shellCommand(['command', '-v', 'systemctl']),
].join('; ');

export interface HostIdentity {
  uid: number;
  user: string;
  systemctlPath: string;
}

/** Parses the three lines of IDENTITY_COMMAND; null when the host answered something else. */
export function parseIdentity(stdout: string): HostIdentity | null {
  const [uidLine, userLine, pathLine] = stdout.split('\n').map((l) => l.trim());
  if (!/^\d+$/.test(uidLine ?? '') || !/^[A-Za-z0-9._][A-Za-z0-9._-]*\$?$/.test(userLine ?? '')) return null;
  return {
    uid: Number(uidLine),
    user: userLine,
    systemctlPath: pathLine && pathLine.startsWith('/') ? pathLine : DEFAULT_SYSTEMCTL,
  };
}

export const FOLLOW_PROPERTIES = [
  'Id',
  'LoadState',
  'ActiveState',
  'SubState',
  'Result',
  'MainPID',
  'ExecMainPID',
  'ExecMainStatus',
  'ExecMainCode',
  'ExecMainStartTimestampMonotonic',
  'NRestarts',
  'InvocationID',
  'ActiveEnterTimestamp',
  'ActiveEnterTimestampMonotonic',
  'TimeoutStartUSec',
] as const;

export function followShowCommand(unit: string): string {
  return shellCommand([
    'systemctl',
    'show',
    '--no-pager',
    `--property=${FOLLOW_PROPERTIES.join(',')}`,
    assertUnitName(unit),
  ]);
}

/** What one `systemctl show` said about the unit being restarted. */
export interface UnitSnapshot {
  loadState: string;
  activeState: string;
  subState: string;
  result: string;
  mainPid: number;
  execMainPid: number;
  /** exit status of the main process (ExecMainStatus), 0 when none. */
  execMainStatus: number;
  execMainStartMono: number;
  nRestarts: number;
  invocationId: string;
  activeEnter: string;
  activeEnterMono: number;
}

export class UnitShowError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnitShowError';
  }
}

export function parseUnitSnapshot(stdout: string, unit: string): UnitSnapshot {
  const kv = new Map<string, string>();
  for (const raw of stdout.split('\n')) {
    const line = raw.replace(/\r$/, '');
    const eq = line.indexOf('=');
    if (eq > 0) kv.set(line.slice(0, eq), line.slice(eq + 1));
  }
  if (!kv.has('ActiveState') || !kv.has('LoadState'))
    throw new UnitShowError(
      `systemctl show ${unit} printed no ActiveState/LoadState: ${JSON.stringify(stdout.slice(0, 200))}`,
    );
  const int = (k: string): number => {
    const n = Number.parseInt(kv.get(k) ?? '', 10);
    return Number.isFinite(n) ? n : 0;
  };
  return {
    loadState: kv.get('LoadState') ?? '',
    activeState: kv.get('ActiveState') ?? '',
    subState: kv.get('SubState') ?? '',
    result: kv.get('Result') ?? '',
    mainPid: int('MainPID'),
    execMainPid: int('ExecMainPID'),
    execMainStatus: int('ExecMainStatus'),
    execMainStartMono: int('ExecMainStartTimestampMonotonic'),
    nRestarts: int('NRestarts'),
    invocationId: kv.get('InvocationID') ?? '',
    activeEnter: kv.get('ActiveEnterTimestamp') ?? '',
    activeEnterMono: int('ActiveEnterTimestampMonotonic'),
  };
}

export function describeUnit(s: UnitSnapshot): string {
  const base = `${s.activeState}/${s.subState}`;
  return s.result && s.result !== 'success' ? `${base} (Result=${s.result})` : base;
}

/**
 * True when `now` is a later run of the unit than `before`: systemd gives each start a new invocation id,
 * a new main PID and new start timestamps. Any one of them differing is enough; hosts without one of these
 * properties print it empty or 0, which never counts as a difference.
 */
export function isNewInvocation(before: UnitSnapshot, now: UnitSnapshot): boolean {
  const differs = <T>(a: T, b: T, none: T): boolean => b !== none && a !== b;
  return (
    differs(before.invocationId, now.invocationId, '') ||
    differs(before.execMainStartMono, now.execMainStartMono, 0) ||
    differs(before.execMainPid, now.execMainPid, 0) ||
    differs(before.activeEnterMono, now.activeEnterMono, 0) ||
    (now.mainPid !== 0 && before.mainPid !== now.mainPid)
  );
}

export type CommandErrorKind =
  'sudo-password' | 'sudo-denied' | 'no-sudo' | 'unit-not-found' | 'access-denied' | 'failed';

/** Classifies a non-zero exit of the restart command from its stderr (sudo and systemctl wording). */
export function classifyCommandError(stderr: string, exitCode: number | null): CommandErrorKind {
  if (/a password is required|a terminal is required|no tty present|askpass/i.test(stderr))
    return 'sudo-password';
  if (
    /not in the sudoers file|is not allowed to execute|may not run sudo|not allowed to run sudo/i.test(stderr)
  )
    return 'sudo-denied';
  if (/sudo: command not found|sudo: not found/i.test(stderr)) return 'no-sudo';
  if (/Unit \S+ not found|not-found|No such unit|Unit \S+ could not be found/i.test(stderr) || exitCode === 5)
    return 'unit-not-found';
  if (/Access denied|Interactive authentication required|Permission denied/i.test(stderr))
    return 'access-denied';
  return 'failed';
}
