// systemctl as systemd 255 prints it: show (key=value, bus order, blank line between units), status,
// is-active/is-failed/is-enabled, list-units, list-unit-files, cat, and start/stop/restart, which need root
// and — like the real thing — block until the job finishes unless --no-block is given.
import type { DemoMachine } from '../machine';
import type { UnitRuntime } from '../simulation';
import { systemdTimespan, systemdTimestamp } from '../time-format';
import { BACKGROUND_UNITS, mangleUnitName } from '../units';
import { staticUnitsOf } from '../prometheus-unit';
import { formatEntry } from '../journal';
import { simSleep, type CommandContext } from './context';

const VERSION_TEXT =
  'systemd 255 (255.4-1ubuntu8.6)\n+PAM +AUDIT +SELINUX +APPARMOR +IMA +SMACK +SECCOMP +GCRYPT -GNUTLS +OPENSSL +ACL +BLKID +CURL +ELFUTILS +FIDO2 +IDN2 -IDN +IPTC +KMOD +LIBCRYPTSETUP +LIBFDISK +PCRE2 -PWQUALITY +P11KIT +QRENCODE +TPM2 +BZIP2 +LZ4 +XZ +ZLIB +ZSTD -BPF_FRAMEWORK -XKBCOMMON +UTMP +SYSVINIT default-hierarchy=unified\n';

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

/** systemd's quoting of an argv in `systemctl show` ExecStart= lines. */
function quoteArgv(argv: string[]): string {
  return argv.map((a) => (/[\s"'\\;$]/.test(a) ? `"${a.replace(/(["\\$])/g, '\\$1')}"` : a)).join(' ');
}

function execLine(
  sim: DemoMachine,
  argv: string[],
  run: { start: number | null; stop: number | null; pid: number; code: 0 | 1 | 2 | 3; status: number },
  ex: boolean,
): string {
  const codeName = ['(null)', 'exited', 'killed', 'dumped'][run.code];
  const sigNames: Record<number, string> = { 9: 'KILL', 15: 'TERM', 6: 'ABRT' };
  const status =
    run.code === 0
      ? '0/0'
      : run.code === 1
        ? `${run.status}/${run.status === 0 ? 'SUCCESS' : 'FAILURE'}`
        : `${run.status}/${sigNames[run.status] ?? String(run.status)}`;
  const when = (ms: number | null): string => (ms === null ? '[n/a]' : `[${systemdTimestamp(ms)}]`);
  return (
    `{ path=${argv[0]} ; argv[]=${quoteArgv(argv)} ; ${ex ? 'flags=' : 'ignore_errors=no'} ; ` +
    `start_time=${when(run.start)} ; stop_time=${when(run.stop)} ; pid=${run.pid} ; code=${codeName} ; status=${status} }`
  );
}

function unitProperties(sim: DemoMachine, u: UnitRuntime): Array<[string, string]> {
  const d = u.def;
  const mem = sim.memoryCurrentBytes(u);
  const running = u.mainPid > 0;
  const main = {
    start: u.execMain.startAt,
    stop: u.execMain.exitAt,
    pid: u.execMain.pid,
    code: u.execMain.code,
    status: u.execMain.status,
  };
  const post = d.execStartPostArgv
    ? {
        start: u.execMain.startAt,
        stop: u.subState === 'start-post' ? null : u.ts.activeEnter,
        pid: u.subState === 'start-post' ? u.controlPid : u.mainPid ? u.mainPid + 1 : 0,
        code: (u.subState === 'start-post' || !u.ts.activeEnter ? 0 : 1) as 0 | 1,
        status: 0,
      }
    : null;
  const cpuNs = Math.round(((u.server?.cpuSeconds ?? 0) + (u.router?.cpuSeconds ?? 0)) * 1e9);
  const props: Array<[string, string]> = [
    ['Type', 'simple'],
    ['ExitType', 'main'],
    ['Restart', d.restart],
    ['RestartMode', 'normal'],
    ['NotifyAccess', 'none'],
    ['RestartUSec', systemdTimespan(d.restartSec * 1e6)],
    ['RestartSteps', '0'],
    ['RestartMaxDelayUSec', 'infinity'],
    ['RestartUSecNext', systemdTimespan(d.restartSec * 1e6)],
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
    ['FileDescriptorStorePreserve', 'restart'],
    ['StatusErrno', '0'],
    ['Result', u.result],
    ['ReloadResult', 'success'],
    ['CleanResult', 'success'],
    ['UID', '[not set]'],
    ['GID', '[not set]'],
    ['NRestarts', String(u.nRestarts)],
    ['OOMPolicy', 'stop'],
    ['ReloadSignal', '1'],
    ['ExecMainStartTimestamp', ts(u.execMain.startAt)],
    ['ExecMainStartTimestampMonotonic', mono(sim, u.execMain.startAt)],
    ['ExecMainExitTimestamp', ts(u.execMain.exitAt)],
    ['ExecMainExitTimestampMonotonic', mono(sim, u.execMain.exitAt)],
    ['ExecMainPID', String(u.execMain.pid)],
    ['ExecMainCode', String(u.execMain.code)],
    ['ExecMainStatus', String(u.execMain.status)],
    ['ExecStart', execLine(sim, d.execStartArgv, main, false)],
    ['ExecStartEx', execLine(sim, d.execStartArgv, main, true)],
  ];
  if (d.execStartPostArgv && post) {
    props.push(['ExecStartPost', execLine(sim, d.execStartPostArgv, post, false)]);
    props.push(['ExecStartPostEx', execLine(sim, d.execStartPostArgv, post, true)]);
  }
  props.push(
    ['Slice', 'system.slice'],
    ['ControlGroup', running ? `/system.slice/${d.name}` : ''],
    ['ControlGroupId', running ? String(4000 + (u.gen % 1000)) : '0'],
    ['MemoryCurrent', mem === null ? '[not set]' : String(mem)],
    ['MemoryPeak', mem === null ? '[not set]' : String(Math.round(Math.max(mem, u.peakMemGiB * 1024 ** 3)))],
    ['MemorySwapCurrent', running ? '0' : '[not set]'],
    ['CPUUsageNSec', running ? String(cpuNs) : '[not set]'],
    ['TasksCurrent', running ? String(d.role === 'router' ? 37 : 412) : '[not set]'],
    ['IPIngressBytes', '[no data]'],
    ['IPEgressBytes', '[no data]'],
    ['Delegate', 'no'],
    ['CPUAccounting', 'yes'],
    ['MemoryAccounting', 'yes'],
    ['TasksAccounting', 'yes'],
    ['TasksMax', '618936'],
    ['Environment', d.environment.join(' ')],
    ['UMask', '0022'],
    ['LimitNOFILE', '524288'],
    ['LimitNOFILESoft', '1024'],
    ['WorkingDirectory', '!/'],
    ['KillMode', 'control-group'],
    ['KillSignal', '15'],
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
  );
  return props;
}

function backgroundProperties(name: string, description: string, sim: DemoMachine): Array<[string, string]> {
  const since = sim.bootedAt + 9000;
  return [
    ['Type', 'simple'],
    ['Restart', 'on-failure'],
    ['MainPID', String(600 + ((name.length * 37) % 900))],
    ['Result', 'success'],
    ['NRestarts', '0'],
    ['ExecMainStatus', '0'],
    ['Id', name],
    ['Names', name],
    ['Description', description],
    ['LoadState', 'loaded'],
    ['ActiveState', 'active'],
    ['SubState', 'running'],
    ['FragmentPath', `/usr/lib/systemd/system/${name}`],
    ['UnitFileState', 'enabled'],
    ['ActiveEnterTimestamp', systemdTimestamp(since)],
    ['ActiveEnterTimestampMonotonic', String(9_000_000)],
  ];
}

function notFoundProperties(name: string): Array<[string, string]> {
  return [
    ['Restart', 'no'],
    ['MainPID', '0'],
    ['Result', 'success'],
    ['NRestarts', '0'],
    ['ExecMainStatus', '0'],
    ['Id', name],
    ['Names', name],
    ['Description', name],
    ['LoadState', 'not-found'],
    ['ActiveState', 'inactive'],
    ['FreezerState', 'running'],
    ['SubState', 'dead'],
    ['ActiveEnterTimestampMonotonic', '0'],
    ['InactiveExitTimestampMonotonic', '0'],
    ['CanStart', 'no'],
    ['CanStop', 'yes'],
    ['LoadError', `org.freedesktop.systemd1.NoSuchUnit "Unit ${name} not found."`],
  ];
}

function propertiesOf(sim: DemoMachine, name: string): Array<[string, string]> {
  const u = unitNamed(sim, name);
  if (u) return unitProperties(sim, u);
  const bg = BACKGROUND_UNITS.find((b) => b.name === name);
  if (bg) return backgroundProperties(bg.name, bg.description, sim);
  const st = staticUnitsOf(sim).find((x) => x.name === name);
  if (st) {
    const run = {
      start: sim.bootedAt + 9000,
      stop: null,
      pid: 700 + st.name.length,
      code: 0 as const,
      status: 0,
    };
    return [
      ...backgroundProperties(st.name, st.description, sim).filter(([k]) => k !== 'FragmentPath'),
      ['FragmentPath', st.fragmentPath],
      ['ExecStart', execLine(sim, st.execStartArgv, run, false)],
      ...st.environmentFiles.map((f): [string, string] => ['EnvironmentFiles', `${f} (ignore_errors=no)`]),
    ];
  }
  return notFoundProperties(name);
}

function show(sim: DemoMachine, args: string[], opts: Opts): string {
  const names = args.length ? args.map(mangleUnitName) : [];
  if (!names.length) {
    // `systemctl show` without units describes the manager.
    const mgr: Array<[string, string]> = [
      ['Version', '255.4-1ubuntu8.6'],
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
    return {
      text: `● ${bg.name} - ${bg.description}\n     Loaded: loaded (/usr/lib/systemd/system/${bg.name}; enabled; preset: enabled)\n     Active: active (running) since ${systemdTimestamp(sim.bootedAt + 9000)}; ${ago(sim.now - sim.bootedAt)} ago\n`,
      code: 0,
    };
  }
  const u = unit as UnitRuntime;
  const d = u.def;
  const dot = u.activeState === 'failed' ? '×' : '●';
  const since =
    u.activeState === 'active'
      ? u.ts.activeEnter
      : u.activeState === 'failed' || u.activeState === 'inactive'
        ? u.ts.inactiveEnter
        : u.ts.stateChange;
  const sub =
    u.activeState === 'failed' ? `failed (Result: ${u.result})` : `${u.activeState} (${u.subState})`;
  const lines = [
    `${dot} ${d.name} - ${d.description}`,
    `     Loaded: loaded (${d.fragmentPath}; enabled; preset: enabled)`,
    `     Active: ${u.activeState === 'inactive' ? 'inactive (dead)' : sub}${since ? ` since ${systemdTimestamp(since)}; ${ago(sim.now - since)} ago` : ''}`,
  ];
  if (u.mainPid) lines.push(`   Main PID: ${u.mainPid} (python)`);
  else if (u.execMain.pid && u.execMain.exitAt !== null) {
    const how =
      u.execMain.code === 1
        ? `exited, status=${u.execMain.status}/${u.execMain.status ? 'FAILURE' : 'SUCCESS'}`
        : `killed, signal=${u.execMain.status === 9 ? 'KILL' : 'TERM'}`;
    lines.push(
      `    Process: ${u.execMain.pid} ExecStart=${d.execStartArgv[0]} ${d.execStartArgv.slice(1).join(' ')} (code=${how})`,
    );
    lines.push(`   Main PID: ${u.execMain.pid} (code=${how})`);
  }
  const mem = sim.memoryCurrentBytes(u);
  if (u.mainPid) {
    lines.push(`      Tasks: ${d.role === 'router' ? 37 : 412} (limit: 618936)`);
    if (mem !== null)
      lines.push(
        `     Memory: ${(mem / 1024 ** 3).toFixed(1)}G (peak: ${Math.max(mem / 1024 ** 3, u.peakMemGiB).toFixed(1)}G)`,
      );
    lines.push(`     CGroup: /system.slice/${d.name}`);
    lines.push(`             └─${u.mainPid} ${d.execStartArgv.join(' ')}`);
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
  return rows.sort((a, b) => a.unit.localeCompare(b.unit));
}

function listUnits(sim: DemoMachine, patterns: string[], opts: Opts): string {
  const res = patterns.map(globToRegExp);
  const types = opts.types.filter((t) => t !== 'service');
  let rows = allRows(sim);
  if (types.length) rows = [];
  if (res.length) rows = rows.filter((r) => res.some((re) => re.test(r.unit)));
  if (opts.states.length)
    rows = rows.filter((r) => opts.states.includes(r.active) || opts.states.includes(r.sub));
  else if (!opts.all) rows = rows.filter((r) => r.active !== 'inactive');
  const w = {
    unit: Math.max(4, ...rows.map((r) => r.unit.length)),
    load: Math.max(4, ...rows.map((r) => r.load.length)),
    active: Math.max(6, ...rows.map((r) => r.active.length)),
    sub: Math.max(3, ...rows.map((r) => r.sub.length)),
  };
  const mark = (r: Row | null): string => (opts.plain ? '' : r?.failed ? '● ' : '  ');
  const line = (r: Row | null, c: [string, string, string, string, string]): string =>
    `${mark(r)}${c[0].padEnd(w.unit)} ${c[1].padEnd(w.load)} ${c[2].padEnd(w.active)} ${c[3].padEnd(w.sub)} ${c[4]}`.trimEnd();
  const out: string[] = [];
  if (!opts.noLegend) out.push(line(null, ['UNIT', 'LOAD', 'ACTIVE', 'SUB', 'DESCRIPTION']));
  for (const r of rows) out.push(line(r, [r.unit, r.load, r.active, r.sub, r.description]));
  if (!opts.noLegend) {
    out.push(
      '',
      'LOAD   = Reflects whether the unit definition was properly loaded.',
      'ACTIVE = The high-level unit activation state, i.e. generalization of SUB.',
      'SUB    = The low-level unit activation state, values depend on unit type.',
      '',
      `${rows.length} loaded units listed.${opts.all ? '' : ' Pass --all to see loaded but inactive units, too.'}`,
      "To show all installed unit files use 'systemctl list-unit-files'.",
    );
  }
  return out.length ? `${out.join('\n')}\n` : '';
}

function listUnitFiles(sim: DemoMachine, patterns: string[], opts: Opts): string {
  const res = patterns.map(globToRegExp);
  let rows = allRows(sim).map((r) => r.unit);
  if (res.length) rows = rows.filter((u) => res.some((re) => re.test(u)));
  const w = Math.max(9, ...rows.map((r) => r.length));
  const out: string[] = [];
  if (!opts.noLegend) out.push(`${'UNIT FILE'.padEnd(w)} STATE   PRESET`);
  for (const r of rows) out.push(`${r.padEnd(w)} enabled enabled`);
  if (!opts.noLegend) out.push('', `${rows.length} unit files listed.`);
  return `${out.join('\n')}\n`;
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
