// The demo host's three systemd units: unit file text, ExecStart argv, environment, ports and GPUs.
// Modelled on the self-written templates in shared/reference/sglang-metrics.md §4. Like those, they are
// Type=simple: SGLang speaks no sd_notify, so systemd calls a unit started the moment its process runs, and
// "loading" is something only the journal and /health can tell.

export type ServerRole = 'prefill' | 'decode';
export type DemoRole = ServerRole | 'router';
export const HOSTNAME = 'h100-pd-01';
export const MODEL_NAME = 'Qwen/Qwen3-32B';
export const MODEL_PATH = '/models/Qwen3-32B';
export const PYTHON = '/opt/sglang/venv/bin/python';

export const PORTS = {
  prefill: 30100,
  decode: 30200,
  routerApi: 30001,
  routerMetrics: 29001,
  bootstrap: 8998,
} as const;

export const GPU_COUNT = 8;
export const TP_SIZE = 4;

/** The router's worker health check interval; the demo sets it in ExecStart so the app can read it. */
export const ROUTER_HEALTH_INTERVAL_S = 10;
export const ROUTER_HEALTH_FAILURE_THRESHOLD = 3;
export const ROUTER_HEALTH_SUCCESS_THRESHOLD = 2;

/** What a server unit runs: one SGLang server process, or one node of a multi-node server. */
export interface ServerSpec {
  role: ServerRole;
  /** The worker it is (or is a node of), e.g. "decode-2"; the single host calls its servers by role. */
  worker: string;
  port: number;
  /** Where the server listens (--host). */
  listenHost: string;
  baseGpu: number;
  /** Tensor-parallel size of the whole server (across its nodes). */
  tp: number;
  dpRanks: number;
  bootstrapPort?: number;
  metrics: boolean;
  /** KV pool in tokens, summed over DP ranks. */
  capacity: number;
  /** Multi-node tensor parallelism: this unit is node `rank` of `nnodes`, rendezvous at distInitAddr. */
  node?: { rank: number; nnodes: number; distInitAddr: string; peer: string };
  /** The port comes from an EnvironmentFile: ExecStart says `--port ${name}`, the file `name=port`. */
  portFromEnvFile?: { file: string; name: string };
}

/** The router's worker list as its ExecStart gives it, each entry with the unit key that serves it. */
export interface RouterSpec {
  apiPort: number;
  metricsPort: number;
  workers: Array<{ role: ServerRole; url: string; bootstrapPort?: number; unit: string }>;
}

export interface UnitDefinition {
  /** Identity in the simulation: the role on the single host, "host/unit" in the fleet. */
  key: string;
  /** Id of the simulated host the unit runs on. */
  host: string;
  role: DemoRole;
  name: string;
  description: string;
  fragmentPath: string;
  /** ExecStart= as written in the unit file, one word each, variables not expanded (what `systemctl show` prints). */
  execStartArgv: string[];
  /** What the process runs: ExecStart with $VAR/${VAR} expanded from Environment= and the EnvironmentFiles. */
  argv: string[];
  environment: string[];
  /** EnvironmentFile= paths. */
  environmentFiles: string[];
  /** Files on the host the unit depends on (its EnvironmentFiles), by absolute path. */
  files: Record<string, string>;
  restart: 'on-failure';
  restartSec: number;
  restartPreventExitStatus?: number[];
  timeoutStartSec: number;
  timeoutStopSec: number;
  startLimitIntervalSec: number;
  startLimitBurst: number;
  after: string[];
  wants: string[];
  /** GPU indices the unit's processes use. */
  gpus: number[];
  /** HTTP port its API listens on; 0 for a node that serves no HTTP (node rank ≥ 1). */
  port: number;
  server?: ServerSpec;
  router?: RouterSpec;
  unitFileText: string;
}

export interface UnitOptions {
  dpRanks: number;
  metricsDisabled: ReadonlySet<ServerRole>;
  /** smg ≥ 1.7 polls the workers' loads into smg_engine_* gauges only when started with --engine-metrics. */
  engineMetrics?: boolean;
}

/** Does the unit's process answer HTTP? Node rank ≥ 1 of a multi-node server does not. */
export function servesHttp(spec: ServerSpec): boolean {
  return !spec.node || spec.node.rank === 0;
}

/** GPUs of one node of the server: tp / nnodes of them from baseGpu. */
export function nodeGpus(spec: ServerSpec): number[] {
  const n = spec.tp / (spec.node?.nnodes ?? 1);
  return Array.from({ length: n }, (_, i) => spec.baseGpu + i);
}

function serverArgv(spec: ServerSpec): string[] {
  const argv = [
    PYTHON,
    '-m',
    'sglang.launch_server',
    '--model-path',
    MODEL_PATH,
    '--served-model-name',
    MODEL_NAME,
    '--tp-size',
    String(spec.tp),
  ];
  if (spec.node)
    argv.push(
      '--nnodes',
      String(spec.node.nnodes),
      '--node-rank',
      String(spec.node.rank),
      '--dist-init-addr',
      spec.node.distInitAddr,
    );
  argv.push(
    '--base-gpu-id',
    String(spec.baseGpu),
    '--host',
    spec.listenHost,
    '--port',
    spec.portFromEnvFile ? `\${${spec.portFromEnvFile.name}}` : String(spec.port),
    '--disaggregation-mode',
    spec.role,
  );
  if (spec.bootstrapPort !== undefined)
    argv.push('--disaggregation-bootstrap-port', String(spec.bootstrapPort));
  argv.push('--disaggregation-transfer-backend', 'mooncake', '--disaggregation-ib-device', 'mlx5_0');
  if (spec.dpRanks > 1) argv.push('--dp-size', String(spec.dpRanks), '--enable-dp-attention');
  if (spec.metrics) argv.push('--enable-metrics');
  return argv;
}

function routerArgv(spec: RouterSpec, engineMetrics: boolean): string[] {
  const workers = spec.workers.flatMap((w) =>
    w.role === 'prefill'
      ? ['--prefill', w.url, ...(w.bootstrapPort !== undefined ? [String(w.bootstrapPort)] : [])]
      : ['--decode', w.url],
  );
  return [
    PYTHON,
    '-m',
    'sglang_router.launch_router',
    '--pd-disaggregation',
    ...workers,
    '--host',
    '0.0.0.0',
    '--port',
    String(spec.apiPort),
    '--prometheus-host',
    '127.0.0.1',
    '--prometheus-port',
    String(spec.metricsPort),
    '--health-check-interval-secs',
    String(ROUTER_HEALTH_INTERVAL_S),
    ...(engineMetrics ? ['--engine-metrics'] : []),
  ];
}

/** One word of an ExecStart= line with systemd.syntax quoting: bare when nothing in it needs quotes. */
export function quoteExecWord(word: string): string {
  if (/^[A-Za-z0-9_@%+=:,./${}-]+$/.test(word)) return word;
  return `"${word.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** Wraps a long argv the way people write unit files: continuation lines at flag boundaries. */
function wrapExec(argv: string[]): string {
  const lines: string[] = [];
  let line = '';
  for (let i = 0; i < argv.length; i++) {
    const a = quoteExecWord(argv[i]);
    const isFlag = a.startsWith('--');
    if (isFlag && line.length > 70) {
      lines.push(line);
      line = '';
    }
    line += (line ? ' ' : '') + a;
  }
  if (line) lines.push(line);
  return lines.join(' \\\n  ');
}

/** KEY=value lines of an EnvironmentFile (comments and blank lines skipped). */
function envFileAssignments(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^\s*([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (m) env[m[1]] = m[2];
  }
  return env;
}

/**
 * The argv systemd hands the process: `${VAR}` replaced by the value as one word, a bare `$VAR` word split on
 * whitespace (systemd.service "Command lines"). Environment= first, then the EnvironmentFiles, which win.
 */
export function expandExecArgv(
  argv: readonly string[],
  environment: readonly string[],
  files: Readonly<Record<string, string>>,
  environmentFiles: readonly string[],
): string[] {
  const env: Record<string, string> = {};
  for (const e of environment) {
    const eq = e.indexOf('=');
    if (eq > 0) env[e.slice(0, eq)] = e.slice(eq + 1);
  }
  for (const f of environmentFiles) Object.assign(env, envFileAssignments(files[f.replace(/^-/, '')] ?? ''));
  const out: string[] = [];
  for (const word of argv) {
    const bare = /^\$([A-Za-z_][A-Za-z0-9_]*)$/.exec(word);
    if (bare) {
      out.push(...(env[bare[1]] ?? '').split(/\s+/).filter((w) => w !== ''));
      continue;
    }
    out.push(word.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, k: string) => env[k] ?? ''));
  }
  return out;
}

function renderUnitFile(def: Omit<UnitDefinition, 'unitFileText'>): string {
  const lines = ['[Unit]', `Description=${def.description}`];
  lines.push(`After=${def.after.join(' ')}`);
  if (def.wants.length) lines.push(`Wants=${def.wants.join(' ')}`);
  lines.push(
    `StartLimitIntervalSec=${def.startLimitIntervalSec}`,
    `StartLimitBurst=${def.startLimitBurst}`,
    '',
  );
  lines.push('[Service]', 'Type=simple');
  for (const e of def.environment) lines.push(`Environment=${e}`);
  for (const f of def.environmentFiles) lines.push(`EnvironmentFile=${f}`);
  lines.push(`ExecStart=${wrapExec(def.execStartArgv)}`);
  lines.push(`Restart=${def.restart}`, `RestartSec=${def.restartSec}`);
  if (def.restartPreventExitStatus?.length) {
    lines.push('# exit status 1 is a configuration or startup error: retrying cannot fix it');
    lines.push(`RestartPreventExitStatus=${def.restartPreventExitStatus.join(' ')}`);
  }
  lines.push(`TimeoutStartSec=${def.timeoutStartSec}`, `TimeoutStopSec=${def.timeoutStopSec}`, '');
  lines.push('[Install]', 'WantedBy=multi-user.target', '');
  return lines.join('\n');
}

/** Completes a definition: the expanded argv and the unit file text. */
function defined(base: Omit<UnitDefinition, 'unitFileText' | 'argv'>): UnitDefinition {
  const argv = expandExecArgv(base.execStartArgv, base.environment, base.files, base.environmentFiles);
  const full = { ...base, argv };
  return { ...full, unitFileText: renderUnitFile(full) };
}

/** One SGLang server unit (or one node's unit of a multi-node server) on `host`. */
export function serverUnit(key: string, host: string, name: string, spec: ServerSpec): UnitDefinition {
  const http = servesHttp(spec);
  const node = spec.node ? `, node ${spec.node.rank} of ${spec.node.nnodes}` : '';
  const label = spec.worker === spec.role ? spec.role : spec.worker;
  const envFile = spec.portFromEnvFile;
  return defined({
    key,
    host,
    role: spec.role,
    name,
    description: `SGLang ${label} (PD${node})`,
    fragmentPath: `/etc/systemd/system/${name}`,
    execStartArgv: serverArgv(spec),
    environmentFiles: envFile ? [envFile.file] : [],
    files: envFile
      ? {
          [envFile.file]: `# ${name}: where this server listens (read by its ExecStart as \${${envFile.name}})\n${envFile.name}=${spec.port}\n`,
        }
      : {},
    environment: [
      'HF_HUB_OFFLINE=1',
      'SGLANG_DISAGGREGATION_BOOTSTRAP_TIMEOUT=300',
      'SGLANG_DISAGGREGATION_WAITING_TIMEOUT=300',
    ],
    restart: 'on-failure',
    restartSec: 10,
    restartPreventExitStatus: [1],
    timeoutStartSec: 1800,
    timeoutStopSec: 60,
    startLimitIntervalSec: 600,
    startLimitBurst: 5,
    after: ['network-online.target', 'nvidia-persistenced.service'],
    wants: ['network-online.target'],
    gpus: nodeGpus(spec),
    port: http ? spec.port : 0,
    server: spec,
  });
}

/** The router unit; it is ordered after (and wants) the server units on its own host. */
export function routerUnit(
  key: string,
  host: string,
  name: string,
  spec: RouterSpec,
  localServers: string[],
  engineMetrics: boolean,
): UnitDefinition {
  return defined({
    key,
    host,
    role: 'router',
    name,
    description: 'SGLang router (PD)',
    fragmentPath: `/etc/systemd/system/${name}`,
    execStartArgv: routerArgv(spec, engineMetrics),
    environment: ['RUST_LOG=info'],
    environmentFiles: [],
    files: {},
    restart: 'on-failure',
    restartSec: 5,
    timeoutStartSec: 90,
    timeoutStopSec: 30,
    startLimitIntervalSec: 600,
    startLimitBurst: 5,
    after: ['network-online.target', ...localServers],
    wants: localServers,
    gpus: [],
    port: spec.apiPort,
    router: spec,
  });
}

/** The single demo host's three units (keys = roles, host "demo"). */
export function buildUnits(opts: UnitOptions): Record<DemoRole, UnitDefinition> {
  const spec = (role: ServerRole): ServerSpec => ({
    role,
    worker: role,
    port: role === 'prefill' ? PORTS.prefill : PORTS.decode,
    listenHost: '127.0.0.1',
    baseGpu: role === 'prefill' ? 0 : 4,
    tp: TP_SIZE,
    dpRanks: role === 'decode' ? opts.dpRanks : 1,
    ...(role === 'prefill' ? { bootstrapPort: PORTS.bootstrap } : {}),
    metrics: !opts.metricsDisabled.has(role),
    capacity: role === 'prefill' ? 447_416 : 2_580_000,
    // Operators often keep ports in an EnvironmentFile; discovery must read it (or the running process).
    ...(role === 'prefill'
      ? { portFromEnvFile: { file: '/etc/sglang/prefill.env', name: 'PREFILL_PORT' } }
      : {}),
  });
  const router: RouterSpec = {
    apiPort: PORTS.routerApi,
    metricsPort: PORTS.routerMetrics,
    workers: [
      {
        role: 'prefill',
        url: `http://127.0.0.1:${PORTS.prefill}`,
        bootstrapPort: PORTS.bootstrap,
        unit: 'prefill',
      },
      { role: 'decode', url: `http://127.0.0.1:${PORTS.decode}`, unit: 'decode' },
    ],
  };
  return {
    prefill: serverUnit('prefill', 'demo', 'sglang-prefill.service', spec('prefill')),
    decode: serverUnit('decode', 'demo', 'sglang-decode.service', spec('decode')),
    router: routerUnit(
      'router',
      'demo',
      'sglang-router.service',
      router,
      ['sglang-prefill.service', 'sglang-decode.service'],
      opts.engineMetrics ?? false,
    ),
  };
}

/** A unit of the host's own (not SGLang's): always running, with the process a real one has. */
export interface BackgroundUnit {
  name: string;
  description: string;
  sub: string;
  /** Where the unit file is: the package's (/lib/systemd/system), hence "enabled" or "static". */
  fileState: 'enabled' | 'static';
  pid: number;
  /** The process's argv as started. */
  argv: string[];
  /** The title the process gave itself over its argv (sshd), which /proc/<pid>/cmdline and ps then show. */
  title?: string;
  user: string;
  /** TCP listeners of the process, as ss prints the local address. */
  listens?: Array<{ address: string; port: number; fd: number; backlog: number }>;
}

/** Other units a real GPU host runs, so discovery code sees a realistic `systemctl list-units` and `ps`. */
export const BACKGROUND_UNITS: readonly BackgroundUnit[] = [
  {
    name: 'cron.service',
    description: 'Regular background program processing daemon',
    sub: 'running',
    fileState: 'enabled',
    pid: 889,
    argv: ['/usr/sbin/cron', '-f'],
    user: 'root',
  },
  {
    name: 'dbus.service',
    description: 'D-Bus System Message Bus',
    sub: 'running',
    fileState: 'static',
    pid: 891,
    argv: [
      '/usr/bin/dbus-daemon',
      '--system',
      '--address=systemd:',
      '--nofork',
      '--nopidfile',
      '--systemd-activation',
      '--syslog-only',
    ],
    user: 'messagebus',
  },
  {
    name: 'nvidia-fabricmanager.service',
    description: 'NVIDIA fabric manager service',
    sub: 'running',
    fileState: 'enabled',
    pid: 915,
    argv: ['/usr/bin/nv-fabricmanager', '-c', '/usr/share/nvidia/nvswitch/fabricmanager.cfg'],
    user: 'root',
  },
  {
    name: 'nvidia-persistenced.service',
    description: 'NVIDIA Persistence Daemon',
    sub: 'running',
    fileState: 'enabled',
    pid: 912,
    argv: ['/usr/bin/nvidia-persistenced', '--user', 'nvidia-persistenced', '--verbose'],
    user: 'nvidia-persistenced',
  },
  {
    name: 'prometheus-node-exporter.service',
    description: 'Prometheus exporter for machine metrics',
    sub: 'running',
    fileState: 'enabled',
    pid: 931,
    argv: ['/usr/bin/prometheus-node-exporter'],
    user: 'prometheus',
    listens: [{ address: '*', port: 9100, fd: 3, backlog: 4096 }],
  },
  {
    name: 'rsyslog.service',
    description: 'System Logging Service',
    sub: 'running',
    fileState: 'enabled',
    pid: 897,
    argv: ['/usr/sbin/rsyslogd', '-n', '-iNONE'],
    user: 'root',
  },
  {
    name: 'ssh.service',
    description: 'OpenBSD Secure Shell server',
    sub: 'running',
    fileState: 'enabled',
    pid: 948,
    argv: ['/usr/sbin/sshd', '-D'],
    title: 'sshd: /usr/sbin/sshd -D [listener] 0 of 10-100 startups',
    user: 'root',
    listens: [
      { address: '0.0.0.0', port: 22, fd: 3, backlog: 128 },
      { address: '[::]', port: 22, fd: 4, backlog: 128 },
    ],
  },
  {
    name: 'systemd-journald.service',
    description: 'Journal Service',
    sub: 'running',
    fileState: 'static',
    pid: 389,
    argv: ['/lib/systemd/systemd-journald'],
    user: 'root',
  },
  {
    name: 'systemd-logind.service',
    description: 'User Login Management',
    sub: 'running',
    fileState: 'static',
    pid: 903,
    argv: ['/lib/systemd/systemd-logind'],
    user: 'root',
  },
  {
    name: 'systemd-resolved.service',
    description: 'Network Name Resolution',
    sub: 'running',
    fileState: 'enabled',
    pid: 702,
    argv: ['/lib/systemd/systemd-resolved'],
    user: 'systemd-resolve',
    listens: [
      { address: '127.0.0.53%lo', port: 53, fd: 14, backlog: 4096 },
      { address: '127.0.0.54', port: 53, fd: 16, backlog: 4096 },
    ],
  },
  {
    name: 'systemd-timesyncd.service',
    description: 'Network Time Synchronization',
    sub: 'running',
    fileState: 'enabled',
    pid: 703,
    argv: ['/lib/systemd/systemd-timesyncd'],
    user: 'systemd-timesync',
  },
  {
    name: 'systemd-udevd.service',
    description: 'Rule-based Manager for Device Events and Files',
    sub: 'running',
    fileState: 'static',
    pid: 421,
    argv: ['/lib/systemd/systemd-udevd'],
    user: 'root',
  },
];

/** systemctl's unit name mangling: a bare name means NAME.service. */
export function mangleUnitName(name: string): string {
  if (/\.(service|socket|target|timer|mount|path|slice|scope|device|swap|automount)$/.test(name)) return name;
  if (name.includes('*') || name.includes('?') || name.includes('[')) return name;
  return `${name}.service`;
}
