// systemctl as systemd 252 (Debian 12) prints it: show (key=value in D-Bus order, a blank line between units,
// ExecStart's argv[] joined with plain spaces and never quoted), status, is-active/is-failed/is-enabled,
// list-units, list-unit-files, cat, and start/stop/restart, which need root and — like the real thing — block
// until the job finishes unless --no-block is given. test/real-systemd/demo-fidelity.test.ts holds it to a real
// systemd 252 field by field.
import type { DemoMachine } from '../machine';
import type { UnitRuntime } from '../simulation';
import { systemdTimespan, systemdTimestamp } from '../time-format';
import { BACKGROUND_UNITS, mangleUnitName, type BackgroundUnit } from '../units';
import { staticUnitsOf } from '../prometheus-unit';
import { formatEntry } from '../journal';
import { processTable, staticPid } from '../process-table';
import { simSleep, type CommandContext } from './context';

const VERSION_TEXT =
  'systemd 252 (252.39-1~deb12u2)\n+PAM +AUDIT +SELINUX +APPARMOR +IMA +SMACK +SECCOMP +GCRYPT -GNUTLS +OPENSSL +ACL +BLKID +CURL +ELFUTILS +FIDO2 +IDN2 -IDN +IPTC +KMOD +LIBCRYPTSETUP +LIBFDISK +PCRE2 -PWQUALITY +P11KIT +QRENCODE +TPM2 +BZIP2 +LZ4 +XZ +ZLIB +ZSTD -BPF_FRAMEWORK -XKBCOMMON +UTMP +SYSVINIT default-hierarchy=unified\n';

interface Opts {
  props: string[];
  value: boolean;
  all: boolean;
  quiet: boolean;
  plain: boolean;
  noLegend: boolean;
  noBlock: boolean;
  types: string[];
  states: string[];
  lines: number;
  user: boolean;
}

type Parsed = { ok: true; verb: string; args: string[]; opts: Opts } | { ok: false; message: string };

const NO_ARG = new Set([
  '--no-pager',
  '--no-legend',
  '--plain',
  '--all',
  '-a',
  '--value',
  '--quiet',
  '-q',
  '--full',
  '-l',
  '--no-ask-password',
  '--system',
  '--user',
  '--no-block',
  '--now',
  '--no-reload',
  '--version',
]);

function parseArgs(argv: string[]): Parsed {
  const opts: Opts = {
    props: [],
    value: false,
    all: false,
    quiet: false,
    plain: false,
    noLegend: false,
    noBlock: false,
    types: [],
    states: [],
    lines: 10,
    user: false,
  };
  const pos: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const take = (): string | null => (i + 1 < argv.length ? argv[++i] : null);
    if (a === '--') {
      pos.push(...argv.slice(i + 1));
      break;
    }
    if (!a.startsWith('-') || a === '-') {
      pos.push(a);
      continue;
    }
    if (NO_ARG.has(a)) {
      if (a === '--all' || a === '-a') opts.all = true;
      if (a === '--value') opts.value = true;
      if (a === '--quiet' || a === '-q') opts.quiet = true;
      if (a === '--plain') opts.plain = true;
      if (a === '--no-legend') opts.noLegend = true;
      if (a === '--no-block') opts.noBlock = true;
      if (a === '--user') opts.user = true;
      if (a === '--version') pos.unshift('--version');
      continue;
    }
    let m = /^--property=(.*)$/.exec(a) ?? /^-p(.+)$/.exec(a);
    if (m) {
      opts.props.push(...m[1].split(','));
      continue;
    }
    if (a === '-p' || a === '--property' || a === '-P') {
      const v = take();
      if (v === null)
        return {
          ok: false,
          message: `systemctl: option requires an argument -- '${a.replace(/^-+/, '')}'\n`,
        };
      opts.props.push(...v.split(','));
      if (a === '-P') opts.value = true;
      continue;
    }
    m = /^--type=(.*)$/.exec(a) ?? /^-t(.+)$/.exec(a);
    if (m || a === '-t' || a === '--type') {
      const v = m ? m[1] : take();
      if (v === null) return { ok: false, message: `systemctl: option requires an argument -- 't'\n` };
      opts.types.push(...v.split(','));
      continue;
    }
    m = /^--state=(.*)$/.exec(a);
    if (m || a === '--state') {
      const v = m ? m[1] : take();
      if (v === null) return { ok: false, message: `systemctl: option '--state' requires an argument\n` };
      opts.states.push(...v.split(','));
      continue;
    }
    m = /^--lines=(\d+)$/.exec(a) ?? /^-n(\d+)$/.exec(a);
    if (m || a === '-n' || a === '--lines') {
      const v = m ? m[1] : take();
      if (v === null || !/^\d+$/.test(v))
        return { ok: false, message: `Failed to parse lines '${v ?? ''}'\n` };
      opts.lines = Number(v);
      continue;
    }
    if (/^--output=/.test(a) || a === '-o' || /^--job-mode=/.test(a) || /^--signal=/.test(a)) {
      if (a === '-o') take();
      continue;
    }
    return { ok: false, message: `systemctl: unrecognized option '${a}'\n` };
  }
  const verb = pos.shift() ?? 'list-units';
  return { ok: true, verb, args: pos, opts };
}

function unitNamed(sim: DemoMachine, name: string): UnitRuntime | null {
  return sim.unitNamed(name);
}

function globToRegExp(glob: string): RegExp {
  const esc = glob
    .replace(/[.+^${}()|\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${esc}$`);
}

// ------------------------------------------------------------------ show

const ts = (ms: number | null): string => (ms === null ? '' : systemdTimestamp(ms));

function mono(sim: DemoMachine, ms: number | null): string {
  return ms === null ? '0' : String(Math.max(0, Math.round((ms - sim.bootedAt) * 1000)));
}

interface ExecRun {
  start: number | null;
  stop: number | null;
  pid: number;
  /** siginfo code: 0 none yet, 1 exited, 2 killed, 3 dumped. */
  code: 0 | 1 | 2 | 3;
  status: number;
}

const SIGNAL_NAMES: Record<number, string> = { 0: '0', 6: 'ABRT', 9: 'KILL', 11: 'SEGV', 15: 'TERM' };

/**
 * One ExecStart= entry as `systemctl show` prints it: argv[] is the words joined with plain spaces, never
 * quoted (so it cannot be split back); status is "N" for an exit, "N/SIG" for a signal, "0/0" before one.
 */
function execLine(argv: readonly string[], run: ExecRun, ex: boolean): string {
  const codeName = ['(null)', 'exited', 'killed', 'dumped'][run.code];
  const status =
    run.code === 1 ? String(run.status) : `${run.status}/${SIGNAL_NAMES[run.status] ?? run.status}`;
  const when = (ms: number | null): string => (ms === null ? '[n/a]' : `[${systemdTimestamp(ms)}]`);
  return (
    `{ path=${argv[0]} ; argv[]=${argv.join(' ')} ; ${ex ? 'flags=' : 'ignore_errors=no'} ; ` +
    `start_time=${when(run.start)} ; stop_time=${when(run.stop)} ; pid=${run.pid} ; code=${codeName} ; status=${status} }`
  );
}

const NO_RUN: ExecRun = { start: null, stop: null, pid: 0, code: 0, status: 0 };

/** The properties of a service unit, in the order systemd 252's D-Bus interfaces give them. */
function unitProperties(sim: DemoMachine, u: UnitRuntime): Array<[string, string]> {
  const d = u.def;
  const mem = sim.memoryCurrentBytes(u);
  const running = u.mainPid > 0;
  const run: ExecRun =
    u.execMain.startAt === null
      ? NO_RUN
      : {
          start: u.execMain.startAt,
          stop: u.execMain.exitAt,
          pid: u.execMain.pid,
          code: u.execMain.code,
          status: u.execMain.status,
        };
  const cpuNs = Math.round(((u.server?.cpuSeconds ?? 0) + (u.router?.cpuSeconds ?? 0)) * 1e9);
  const props: Array<[string, string]> = [
    ['Type', 'simple'],
    ['ExitType', 'main'],
    ['Restart', d.restart],
    ['NotifyAccess', 'none'],
    ['RestartUSec', systemdTimespan(d.restartSec * 1e6)],
    ['TimeoutStartUSec', systemdTimespan(d.timeoutStartSec * 1e6)],
    ['TimeoutStopUSec', systemdTimespan(d.timeoutStopSec * 1e6)],
    ['TimeoutAbortUSec', systemdTimespan(d.timeoutStopSec * 1e6)],
    ['TimeoutStartFailureMode', 'terminate'],
    ['TimeoutStopFailureMode', 'terminate'],
    ['RuntimeMaxUSec', 'infinity'],
    ['RuntimeRandomizedExtraUSec', '0'],
    ['WatchdogUSec', '0'],
    ['WatchdogTimestampMonotonic', '0'],
    ['RootDirectoryStartOnly', 'no'],
    ['RemainAfterExit', 'no'],
    ['GuessMainPID', 'yes'],
    ['RestartPreventExitStatus', (d.restartPreventExitStatus ?? []).join(' ')],
    ['MainPID', String(u.mainPid)],
    ['ControlPID', String(u.controlPid)],
    ['FileDescriptorStoreMax', '0'],
    ['NFileDescriptorStore', '0'],
    ['StatusErrno', '0'],
    ['Result', u.result],
    ['ReloadResult', 'success'],
    ['CleanResult', 'success'],
    ['UID', '[not set]'],
    ['GID', '[not set]'],
    ['NRestarts', String(u.nRestarts)],
    ['OOMPolicy', 'stop'],
    ['ExecMainStartTimestamp', ts(u.execMain.startAt)],
    ['ExecMainStartTimestampMonotonic', mono(sim, u.execMain.startAt)],
    ['ExecMainExitTimestamp', ts(u.execMain.exitAt)],
    ['ExecMainExitTimestampMonotonic', mono(sim, u.execMain.exitAt)],
    ['ExecMainPID', String(u.execMain.pid)],
    ['ExecMainCode', String(u.execMain.code)],
    ['ExecMainStatus', String(u.execMain.status)],
    ['ExecStart', execLine(d.execStartArgv, run, false)],
    ['ExecStartEx', execLine(d.execStartArgv, run, true)],
    ['Slice', 'system.slice'],
    ['ControlGroup', running ? `/system.slice/${d.name}` : ''],
    ['ControlGroupId', running ? String(4000 + (u.gen % 1000)) : '0'],
    ['MemoryCurrent', mem === null ? '[not set]' : String(mem)],
    ['MemoryAvailable', 'infinity'],
    ['CPUUsageNSec', running ? String(cpuNs) : '[not set]'],
    ['TasksCurrent', running ? String(d.role === 'router' ? 37 : 412) : '[not set]'],
    ['IPIngressBytes', '[no data]'],
    ['IPIngressPackets', '[no data]'],
    ['IPEgressBytes', '[no data]'],
    ['IPEgressPackets', '[no data]'],
    ['Delegate', 'no'],
    ['CPUAccounting', 'yes'],
    ['MemoryAccounting', 'yes'],
    ['TasksAccounting', 'yes'],
    ['TasksMax', '618936'],
    ['Environment', d.environment.join(' ')],
    ...d.environmentFiles.map((f): [string, string] => [
      'EnvironmentFiles',
      `${f.replace(/^-/, '')} (ignore_errors=${f.startsWith('-') ? 'yes' : 'no'})`,
    ]),
    ['UMask', '0022'],
    ['LimitNOFILE', '524288'],
    ['LimitNOFILESoft', '1024'],
    ['KillMode', 'control-group'],
    ['KillSignal', '15'],
    ['RestartKillSignal', '15'],
    ['FinalKillSignal', '9'],
    ['SendSIGKILL', 'yes'],
    ['Id', d.name],
    ['Names', d.name],
    ['Requires', 'system.slice sysinit.target'],
    ['Wants', d.wants.join(' ')],
    ['WantedBy', 'multi-user.target'],
    ['Conflicts', 'shutdown.target'],
    ['Before', 'shutdown.target multi-user.target'],
    [
      'After',
      ['systemd-journald.socket', 'basic.target', 'sysinit.target', 'system.slice', ...d.after].join(' '),
    ],
    ['Description', d.description],
    ['LoadState', 'loaded'],
    ['ActiveState', u.activeState],
    ['FreezerState', 'running'],
    ['SubState', u.subState],
    ['FragmentPath', d.fragmentPath],
    ['UnitFileState', 'enabled'],
    ['UnitFilePreset', 'enabled'],
    ['StateChangeTimestamp', ts(u.ts.stateChange)],
    ['StateChangeTimestampMonotonic', mono(sim, u.ts.stateChange)],
    ['InactiveExitTimestamp', ts(u.ts.inactiveExit)],
    ['InactiveExitTimestampMonotonic', mono(sim, u.ts.inactiveExit)],
    ['ActiveEnterTimestamp', ts(u.ts.activeEnter)],
    ['ActiveEnterTimestampMonotonic', mono(sim, u.ts.activeEnter)],
    ['ActiveExitTimestamp', ts(u.ts.activeExit)],
    ['ActiveExitTimestampMonotonic', mono(sim, u.ts.activeExit)],
    ['InactiveEnterTimestamp', ts(u.ts.inactiveEnter)],
    ['InactiveEnterTimestampMonotonic', mono(sim, u.ts.inactiveEnter)],
    ['CanStart', 'yes'],
    ['CanStop', 'yes'],
    ['CanReload', 'no'],
    ['CanIsolate', 'no'],
    ['CanFreeze', 'yes'],
    ['StopWhenUnneeded', 'no'],
    ['RefuseManualStart', 'no'],
    ['RefuseManualStop', 'no'],
    ['AllowIsolate', 'no'],
    ['DefaultDependencies', 'yes'],
    ['OnSuccessJobMode', 'fail'],
    ['OnFailureJobMode', 'replace'],
    ['IgnoreOnIsolate', 'no'],
    ['NeedDaemonReload', 'no'],
    ['JobTimeoutUSec', 'infinity'],
    ['JobRunningTimeoutUSec', 'infinity'],
    ['JobTimeoutAction', 'none'],
    ['ConditionResult', 'yes'],
    ['AssertResult', 'yes'],
    ['ConditionTimestamp', ts(u.execMain.startAt)],
    ['ConditionTimestampMonotonic', mono(sim, u.execMain.startAt)],
    ['AssertTimestamp', ts(u.execMain.startAt)],
    ['AssertTimestampMonotonic', mono(sim, u.execMain.startAt)],
    ['Transient', 'no'],
    ['Perpetual', 'no'],
    ['StartLimitIntervalUSec', systemdTimespan(d.startLimitIntervalSec * 1e6)],
    ['StartLimitBurst', String(d.startLimitBurst)],
    ['StartLimitAction', 'none'],
    ['FailureAction', 'none'],
    ['SuccessAction', 'none'],
    ['InvocationID', u.invocationId],
    ['CollectMode', 'inactive'],
  ];
  return props;
}

/** A host service that is not the simulation's: running since boot, its process in the process table. */
function backgroundProperties(
  b: Pick<BackgroundUnit, 'name' | 'description' | 'fileState' | 'pid'> & { fragmentPath?: string },
  sim: DemoMachine,
  argv?: readonly string[],
  environmentFiles: readonly string[] = [],
): Array<[string, string]> {
  const since = sim.bootedAt + 9000;
  const monoSince = String(9_000_000);
  const run: ExecRun = { start: since, stop: null, pid: b.pid, code: 0, status: 0 };
  return [
    ['Type', 'simple'],
    ['Restart', 'on-failure'],
    ['TimeoutStartUSec', '1min 30s'],
    ['MainPID', String(b.pid)],
    ['Result', 'success'],
    ['NRestarts', '0'],
    ['ExecMainStartTimestamp', systemdTimestamp(since)],
    ['ExecMainStartTimestampMonotonic', monoSince],
    ['ExecMainExitTimestampMonotonic', '0'],
    ['ExecMainPID', String(b.pid)],
    ['ExecMainCode', '0'],
    ['ExecMainStatus', '0'],
    ...(argv
      ? ([
          ['ExecStart', execLine(argv, run, false)],
          ['ExecStartEx', execLine(argv, run, true)],
        ] as Array<[string, string]>)
      : []),
    ['MemoryCurrent', String(20_971_520 + (b.pid % 97) * 131_072)],
    ['Environment', ''],
    ...environmentFiles.map((f): [string, string] => ['EnvironmentFiles', `${f} (ignore_errors=no)`]),
    ['Id', b.name],
    ['Names', b.name],
    ['Description', b.description],
    ['LoadState', 'loaded'],
    ['ActiveState', 'active'],
    ['SubState', 'running'],
    ['FragmentPath', b.fragmentPath ?? `/lib/systemd/system/${b.name}`],
    ['UnitFileState', b.fileState],
    ['StateChangeTimestamp', systemdTimestamp(since)],
    ['StateChangeTimestampMonotonic', monoSince],
    ['InactiveExitTimestamp', systemdTimestamp(since)],
    ['InactiveExitTimestampMonotonic', monoSince],
    ['ActiveEnterTimestamp', systemdTimestamp(since)],
    ['ActiveEnterTimestampMonotonic', monoSince],
    ['InactiveEnterTimestamp', ''],
    ['InactiveEnterTimestampMonotonic', '0'],
    ['NeedDaemonReload', 'no'],
    ['InvocationID', hex32(b.name)],
  ];
}

function hex32(seed: string): string {
  let h = 2166136261;
  let out = '';
  for (let i = 0; out.length < 32; i++) {
    h = Math.imul(h ^ seed.charCodeAt(i % seed.length) ^ i, 16777619) >>> 0;
    out += h.toString(16).padStart(8, '0');
  }
  return out.slice(0, 32);
}

/** What systemd 252 prints for a unit it has no file for. */
function notFoundProperties(name: string): Array<[string, string]> {
  return [
    ['Restart', 'no'],
    ['TimeoutStartUSec', '1min 30s'],
    ['MainPID', '0'],
    ['Result', 'success'],
    ['NRestarts', '0'],
    ['ExecMainStartTimestamp', ''],
    ['ExecMainStartTimestampMonotonic', '0'],
    ['ExecMainExitTimestamp', ''],
    ['ExecMainExitTimestampMonotonic', '0'],
    ['ExecMainPID', '0'],
    ['ExecMainCode', '0'],
    ['ExecMainStatus', '0'],
    ['MemoryCurrent', '[not set]'],
    ['Environment', ''],
    ['Id', name],
    ['Names', name],
    ['Description', name],
    ['LoadState', 'not-found'],
    ['ActiveState', 'inactive'],
    ['FreezerState', 'running'],
    ['SubState', 'dead'],
    ['FragmentPath', ''],
    ['StateChangeTimestamp', ''],
    ['StateChangeTimestampMonotonic', '0'],
    ['InactiveExitTimestamp', ''],
    ['InactiveExitTimestampMonotonic', '0'],
    ['ActiveEnterTimestamp', ''],
    ['ActiveEnterTimestampMonotonic', '0'],
    ['ActiveExitTimestamp', ''],
    ['ActiveExitTimestampMonotonic', '0'],
    ['InactiveEnterTimestamp', ''],
    ['InactiveEnterTimestampMonotonic', '0'],
    ['CanStart', 'no'],
    ['CanStop', 'yes'],
    ['NeedDaemonReload', 'no'],
    ['InvocationID', ''],
    ['LoadError', `org.freedesktop.systemd1.NoSuchUnit "Unit ${name} not found."`],
  ];
}

function propertiesOf(sim: DemoMachine, name: string): Array<[string, string]> {
  const u = unitNamed(sim, name);
  if (u) return unitProperties(sim, u);
  const bg = BACKGROUND_UNITS.find((b) => b.name === name);
  if (bg) return backgroundProperties(bg, sim, bg.argv);
  const statics = staticUnitsOf(sim);
  const i = statics.findIndex((x) => x.name === name);
  if (i >= 0) {
    const st = statics[i];
    return backgroundProperties(
      {
        name: st.name,
        description: st.description,
        fileState: 'enabled',
        pid: staticPid(st.name, i),
        fragmentPath: st.fragmentPath,
      },
      sim,
      st.execStartArgv,
      st.environmentFiles,
    );
  }
  return notFoundProperties(name);
}

function show(sim: DemoMachine, args: string[], opts: Opts): string {
  const names = args.length ? args.map(mangleUnitName) : [];
  if (!names.length) {
    // `systemctl show` without units describes the manager.
    const mgr: Array<[string, string]> = [
      ['Version', '252.39-1~deb12u2'],
      ['Architecture', 'x86-64'],
      ['Virtualization', ''],
      ['SystemState', 'running'],
      ['NNames', '312'],
      ['NFailedUnits', String(sim.units().filter((u) => u.activeState === 'failed').length)],
      ['UserspaceTimestamp', systemdTimestamp(sim.bootedAt + 2400)],
    ];
    return renderProps(mgr, opts);
  }
  return names.map((n) => renderProps(propertiesOf(sim, n), opts)).join('\n');
}

function renderProps(props: Array<[string, string]>, opts: Opts): string {
  const wanted = opts.props.length ? new Set(opts.props) : null;
  let out = '';
  for (const [k, v] of props) {
    if (wanted && !wanted.has(k)) continue;
    if (!wanted && !opts.all && v === '') continue;
    out += opts.value ? `${v}\n` : `${k}=${v}\n`;
  }
  return out;
}

/** The malformed-systemctl fault: duplicated keys, lines without '=', a NUL, bad numbers, a cut-off line. */
function malform(text: string): string {
  const lines = text.split('\n');
  const out: string[] = [];
  lines.forEach((l, i) => {
    if (l.startsWith('NRestarts=')) out.push('NRestarts=several');
    else if (l.startsWith('ActiveEnterTimestamp='))
      out.push('ActiveEnterTimestamp=Tue 2026-13-45 99:99:99 XYZ');
    else if (l.startsWith('MainPID=')) out.push(l, 'MainPID=-1');
    else out.push(l);
    if (i === 1)
      out.push('Failed to parse bus message: Bad message', '\u0000\u0001garbage\u0007 without equals sign');
  });
  const joined = out.join('\n');
  return joined.slice(0, Math.max(10, joined.length - 17));
}

// ------------------------------------------------------------------ status / lists

function statusText(sim: DemoMachine, name: string, opts: Opts): { text: string; code: number } {
  const unit = unitNamed(sim, name);
  const bg = BACKGROUND_UNITS.find((b) => b.name === name);
  if (!unit && !bg) return { text: '', code: 4 };
  if (!unit && bg) {
    const lines = [
      `● ${bg.name} - ${bg.description}`,
      `     Loaded: loaded (/lib/systemd/system/${bg.name}; ${bg.fileState}; preset: enabled)`,
      `     Active: active (running) since ${systemdTimestamp(sim.bootedAt + 9000)}; ${ago(sim.now - sim.bootedAt)} ago`,
      `   Main PID: ${bg.pid} (${(bg.argv[0] ?? '').split('/').pop()})`,
      `     CGroup: /system.slice/${bg.name}`,
      `             └─${bg.pid} ${bg.title ?? bg.argv.join(' ')}`,
    ];
    return { text: `${lines.join('\n')}\n`, code: 0 };
  }
  const u = unit as UnitRuntime;
  const d = u.def;
  // ● active or changing, ○ inactive, × failed (systemd 252).
  const dot = u.activeState === 'failed' ? '×' : u.activeState === 'inactive' ? '○' : '●';
  const since =
    u.activeState === 'active'
      ? u.ts.activeEnter
      : u.activeState === 'failed' || u.activeState === 'inactive'
        ? u.ts.inactiveEnter
        : u.ts.stateChange;
  const state =
    u.activeState === 'failed'
      ? `failed (Result: ${u.result})`
      : u.subState === 'auto-restart'
        ? `activating (auto-restart) (Result: ${u.result})`
        : `${u.activeState} (${u.subState})`;
  const lines = [
    `${dot} ${d.name} - ${d.description}`,
    `     Loaded: loaded (${d.fragmentPath}; enabled; preset: enabled)`,
    `     Active: ${state}${since ? ` since ${systemdTimestamp(since)}; ${ago(sim.now - since)} ago` : ''}`,
  ];
  if (!u.mainPid && u.execMain.pid && u.execMain.exitAt !== null) {
    if (u.execMain.startAt !== null && u.activeState !== 'activating')
      lines.push(`   Duration: ${systemdTimespan((u.execMain.exitAt - u.execMain.startAt) * 1000, 1000)}`);
    const how =
      u.execMain.code === 1
        ? `exited, status=${u.execMain.status}/${u.execMain.status ? 'FAILURE' : 'SUCCESS'}`
        : `killed, signal=${SIGNAL_NAMES[u.execMain.status] ?? u.execMain.status}`;
    lines.push(`    Process: ${u.execMain.pid} ExecStart=${d.execStartArgv.join(' ')} (code=${how})`);
    lines.push(`   Main PID: ${u.execMain.pid} (code=${how})`);
  }
  const mem = sim.memoryCurrentBytes(u);
  if (u.mainPid) {
    const own = new Set([u.mainPid]);
    const procs = processTable(sim).filter((p) =>
      own.has(p.pid) || own.has(p.ppid) ? own.add(p.pid) : false,
    );
    lines.push(`   Main PID: ${u.mainPid} (${procs[0]?.comm ?? 'python'})`);
    lines.push(`      Tasks: ${d.role === 'router' ? 37 : 412} (limit: 618936)`);
    if (mem !== null) lines.push(`     Memory: ${(mem / 1024 ** 3).toFixed(1)}G`);
    const cpu = (u.server?.cpuSeconds ?? 0) + (u.router?.cpuSeconds ?? 0);
    lines.push(`        CPU: ${systemdTimespan(cpu * 1e6, 1000)}`);
    lines.push(`     CGroup: /system.slice/${d.name}`);
    procs.forEach((p, i) =>
      lines.push(`             ${i === procs.length - 1 ? '└─' : '├─'}${p.pid} ${p.args}`),
    );
  }
  const entries = sim.journal.query({ units: [d.name], lines: opts.lines });
  if (entries.length) {
    lines.push('');
    for (const e of entries) lines.push(formatEntry(e, 'short', { all: false }).toString('utf8'));
  }
  const code =
    u.activeState === 'active' || u.activeState === 'activating' || u.activeState === 'deactivating' ? 0 : 3;
  return { text: `${lines.join('\n')}\n`, code };
}

function ago(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (d) return `${d} day${d > 1 ? 's' : ''} ${h}h`;
  if (h) return `${h}h ${m}min`;
  if (m) return `${m}min ${s % 60}s`;
  return `${s}s`;
}

interface Row {
  unit: string;
  load: string;
  active: string;
  sub: string;
  description: string;
  failed: boolean;
}

/** systemctl orders units by name with strcmp. */
const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function allRows(sim: DemoMachine): Row[] {
  const rows: Row[] = BACKGROUND_UNITS.map((b) => ({
    unit: b.name,
    load: 'loaded',
    active: 'active',
    sub: b.sub,
    description: b.description,
    failed: false,
  }));
  for (const st of staticUnitsOf(sim))
    rows.push({
      unit: st.name,
      load: 'loaded',
      active: 'active',
      sub: 'running',
      description: st.description,
      failed: false,
    });
  for (const u of sim.units()) {
    rows.push({
      unit: u.def.name,
      load: 'loaded',
      active: u.activeState,
      sub: u.subState,
      description: u.def.description,
      failed: u.activeState === 'failed',
    });
  }
  return rows.sort((a, b) => byName(a.unit, b.unit));
}

/** Columns padded to their widest cell and one space apart, the last one not padded (systemd's format-table). */
function table(rows: string[][]): string[] {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => [...r[c]].length)));
  return rows.map((r) =>
    r
      .map((cell, c) => (c === r.length - 1 ? cell : cell + ' '.repeat(widths[c] - [...cell].length)))
      .join(' ')
      .trimEnd(),
  );
}

/** `systemctl list-units` as systemd 252 prints it (output_units_list): table, legend, count and hints. */
function listUnits(sim: DemoMachine, patterns: string[], opts: Opts): string {
  const res = patterns.map(globToRegExp);
  const types = opts.types.filter((t) => t !== 'service');
  let rows = allRows(sim);
  if (types.length) rows = [];
  if (res.length) rows = rows.filter((r) => res.some((re) => re.test(r.unit)));
  if (opts.states.length)
    rows = rows.filter((r) => opts.states.includes(r.active) || opts.states.includes(r.sub));
  else if (!opts.all) rows = rows.filter((r) => r.active !== 'inactive');
  // A not-loaded or failed unit is marked with a circle, except in --plain output.
  const cells = rows.map((r) => [
    ...(opts.plain ? [] : [r.failed ? '●' : ' ']),
    r.unit,
    r.load,
    r.active,
    r.sub,
    r.description,
  ]);
  const header = [...(opts.plain ? [] : [' ']), 'UNIT', 'LOAD', 'ACTIVE', 'SUB', 'DESCRIPTION'];
  const lines = table(opts.noLegend ? (cells.length ? cells : [header]) : [header, ...cells]);
  const out = opts.noLegend ? (cells.length ? lines : []) : lines;
  if (!opts.noLegend) {
    if (rows.length)
      out.push(
        '',
        'LOAD   = Reflects whether the unit definition was properly loaded.',
        'ACTIVE = The high-level unit activation state, i.e. generalization of SUB.',
        'SUB    = The low-level unit activation state, values depend on unit type.',
      );
    const hint = "To show all installed unit files use 'systemctl list-unit-files'.";
    if (opts.all || opts.states.includes('inactive')) out.push(`${rows.length} loaded units listed.`, hint);
    else if (!opts.states.length)
      out.push(`${rows.length} loaded units listed. Pass --all to see loaded but inactive units, too.`, hint);
    else out.push(`${rows.length} loaded units listed.`);
  }
  return out.length ? `${out.join('\n')}\n` : '';
}

/** `systemctl list-unit-files`: every installed unit file with its enablement state and preset. */
function listUnitFiles(sim: DemoMachine, patterns: string[], opts: Opts): string {
  const res = patterns.map(globToRegExp);
  const types = opts.types.filter((t) => t !== 'service');
  const files: Array<[string, string, string]> = [
    ...BACKGROUND_UNITS.map((b): [string, string, string] => [
      b.name,
      b.fileState,
      b.fileState === 'static' ? '-' : 'enabled',
    ]),
    ...staticUnitsOf(sim).map((st): [string, string, string] => [st.name, 'enabled', 'enabled']),
    ...sim.units().map((u): [string, string, string] => [u.def.name, 'enabled', 'enabled']),
  ].sort((a, b) => byName(a[0], b[0]));
  let rows = types.length ? [] : files;
  if (res.length) rows = rows.filter(([u]) => res.some((re) => re.test(u)));
  const cells = rows.map((r) => [...r]);
  if (opts.noLegend) return cells.length ? `${table(cells).join('\n')}\n` : '';
  return `${[...table([['UNIT FILE', 'STATE', 'PRESET'], ...cells]), '', `${rows.length} unit files listed.`].join('\n')}\n`;
}

// ------------------------------------------------------------------ jobs

const JOB_EXPLANATION: Record<string, string> = {
  'exit-code': 'the control process exited with error code',
  signal: 'a fatal signal was delivered to the control process',
  timeout: 'a timeout was exceeded',
  'core-dump': 'a fatal signal was delivered causing the control process to dump core',
};

async function waitForJob(
  ctx: CommandContext,
  u: UnitRuntime,
  want: 'active' | 'inactive',
): Promise<string | null> {
  const { sim } = ctx;
  // Let the state machine take its first step (stopping takes a few seconds before the start begins).
  for (;;) {
    sim.advance();
    if (want === 'inactive' && (u.activeState === 'inactive' || u.activeState === 'failed')) return null;
    if (want === 'active') {
      if (u.activeState === 'active') return null;
      if (u.activeState === 'failed' || u.subState === 'auto-restart') return u.result;
      if (u.activeState === 'inactive' && !u.restartPending) return 'exit-code';
    }
    if (!(await simSleep(ctx, 500))) return null;
  }
}

async function job(
  verb: 'start' | 'stop' | 'restart',
  names: string[],
  opts: Opts,
  ctx: CommandContext,
): Promise<number> {
  const { sim, io } = ctx;
  if (!names.length) {
    io.err(`Too few arguments.\n`);
    return 1;
  }
  const label = { start: 'start', stop: 'stop', restart: 'restart' }[verb];
  if (ctx.user !== 'root') {
    for (const n of names) io.err(`Failed to ${label} ${n}: Interactive authentication required.\n`);
    return 4;
  }
  const units: UnitRuntime[] = [];
  for (const n of names) {
    const u = unitNamed(sim, n);
    if (!u) {
      if (BACKGROUND_UNITS.some((b) => b.name === n)) continue;
      io.err(`Failed to ${label} ${n}: Unit ${n} not found.\n`);
      return 5;
    }
    units.push(u);
  }
  for (const u of units) {
    if (verb === 'start') sim.startUnit(u);
    else if (verb === 'stop') sim.stopUnit(u);
    else sim.restartUnit(u);
  }
  if (opts.noBlock) return 0;
  let code = 0;
  for (const u of units) {
    const result = await waitForJob(ctx, u, verb === 'stop' ? 'inactive' : 'active');
    if (io.signal.aborted) return 130;
    if (result) {
      const n = u.def.name;
      io.err(
        `Job for ${n} failed because ${JOB_EXPLANATION[result] ?? 'the service did not take the steps required by its unit configuration'}.\n` +
          `See "systemctl status ${n}" and "journalctl -xeu ${n}" for details.\n`,
      );
      code = 1;
    }
  }
  return code;
}

// ------------------------------------------------------------------ entry point

export async function systemctl(argv: string[], ctx: CommandContext): Promise<number> {
  const { sim, io } = ctx;
  sim.advance();
  const p = parseArgs(argv.slice(1));
  if (!p.ok) {
    io.err(p.message);
    return 1;
  }
  const { verb, opts } = p;
  const names = p.args.map(mangleUnitName);
  const malformed = sim.isFaultOn('malformed-systemctl');
  if (verb === '--version') {
    io.out(VERSION_TEXT);
    return 0;
  }
  if (opts.user) {
    // The services are system units; the operator's user manager knows none of them.
    if (verb === 'show') {
      io.out(names.map((n) => renderProps(notFoundProperties(n), opts)).join('\n'));
      return 0;
    }
  }
  switch (verb) {
    case 'show': {
      const text = show(sim, p.args, opts);
      io.out(malformed ? malform(text) : text);
      return 0;
    }
    case 'is-active':
    case 'is-failed': {
      if (!names.length) {
        io.err('Too few arguments.\n');
        return 1;
      }
      let ok = verb === 'is-active';
      let any = false;
      for (const n of names) {
        const u = unitNamed(sim, n);
        const state = u ? u.activeState : BACKGROUND_UNITS.some((b) => b.name === n) ? 'active' : 'inactive';
        if (!opts.quiet) io.out(malformed ? `${state}\u0000??\n` : `${state}\n`);
        if (verb === 'is-active' && state !== 'active') ok = false;
        if (verb === 'is-failed' && state === 'failed') any = true;
      }
      if (verb === 'is-failed') return any ? 0 : 1;
      return ok ? 0 : 3;
    }
    case 'is-enabled': {
      let code = 0;
      for (const n of names) {
        if (unitNamed(sim, n) || BACKGROUND_UNITS.some((b) => b.name === n)) {
          if (!opts.quiet) io.out('enabled\n');
        } else {
          io.err(`Failed to get unit file state for ${n}: No such file or directory\n`);
          code = 1;
        }
      }
      return code;
    }
    case 'status': {
      let code = 0;
      const parts: string[] = [];
      for (const n of names.length ? names : []) {
        const s = statusText(sim, n, opts);
        if (s.code === 4) {
          io.err(`Unit ${n} could not be found.\n`);
          code = 4;
          continue;
        }
        parts.push(s.text);
        if (s.code !== 0 && code === 0) code = s.code;
      }
      if (!names.length) {
        parts.push(
          `● ${sim.hostname}\n    State: running\n    Units: 312 loaded (incl. loaded aliases)\n     Jobs: 0 queued\n   Failed: 0 units\n`,
        );
      }
      io.out(parts.join('\n'));
      return code;
    }
    case 'list-units': {
      const text = listUnits(sim, p.args, opts);
      io.out(malformed ? malform(text) : text);
      return 0;
    }
    case 'list-unit-files':
      io.out(listUnitFiles(sim, p.args, opts));
      return 0;
    case 'cat': {
      let code = 0;
      const parts: string[] = [];
      for (const n of names) {
        const u = unitNamed(sim, n);
        const st = staticUnitsOf(sim).find((x) => x.name === n);
        if (!u && st) {
          parts.push(`# ${st.fragmentPath}\n${st.unitFileText}`);
          continue;
        }
        if (!u) {
          io.err(`No files found for ${n}.\n`);
          code = 1;
          continue;
        }
        const d = u.def;
        parts.push(`# ${d.fragmentPath}\n${d.unitFileText}`);
      }
      io.out(parts.join('\n'));
      return code;
    }
    case 'start':
    case 'stop':
    case 'restart':
      return job(verb, names, opts, ctx);
    case 'try-restart':
    case 'reload-or-restart':
    case 'force-reload':
      return job('restart', names, opts, ctx);
    case 'daemon-reload':
    case 'reset-failed':
      if (ctx.user !== 'root') {
        io.err(
          `Failed to ${verb === 'daemon-reload' ? 'reload daemon' : 'reset failed state'}: Interactive authentication required.\n`,
        );
        return 4;
      }
      return 0;
    default:
      io.err(`Unknown command verb '${verb}'.\n`);
      return 1;
  }
}
