// The demo host's three systemd units: unit file text, ExecStart argv, environment, ports and GPUs.
// Modelled on the self-written templates in shared/reference/sglang-metrics.md §4.

export type ServerRole = 'prefill' | 'decode';
export type DemoRole = ServerRole | 'router';
export const DEMO_ROLES: readonly DemoRole[] = ['prefill', 'decode', 'router'];

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
  /** Lines of the ExecStart= as written in the file (joined with " \\\n  "). */
  execStartArgv: string[];
  execStartPostArgv?: string[];
  environment: string[];
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
    String(spec.port),
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

/** Wraps a long argv the way people write unit files: continuation lines at flag boundaries. */
function wrapExec(argv: string[]): string {
  const lines: string[] = [];
  let line = '';
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
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

function readinessWait(port: number): string[] {
  // The servers do not speak sd_notify, so the unit stays "activating" until the API answers. That makes
  // systemd's own state mean "loading", and TimeoutStartSec bound the load.
  return [
    '/bin/sh',
    '-c',
    `until curl -sf -o /dev/null http://127.0.0.1:${port}/get_model_info; do sleep 5; done`,
  ];
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
  lines.push(`ExecStart=${wrapExec(def.execStartArgv)}`);
  if (def.execStartPostArgv) {
    const [bin, flag, script] = def.execStartPostArgv;
    lines.push(`ExecStartPost=${bin} ${flag} '${script}'`);
  }
  lines.push(`Restart=${def.restart}`, `RestartSec=${def.restartSec}`);
  if (def.restartPreventExitStatus?.length) {
    lines.push('# exit status 1 is a configuration or startup error: retrying cannot fix it');
    lines.push(`RestartPreventExitStatus=${def.restartPreventExitStatus.join(' ')}`);
  }
  lines.push(`TimeoutStartSec=${def.timeoutStartSec}`, `TimeoutStopSec=${def.timeoutStopSec}`, '');
  lines.push('[Install]', 'WantedBy=multi-user.target', '');
  return lines.join('\n');
}

/** One SGLang server unit (or one node's unit of a multi-node server) on `host`. */
export function serverUnit(key: string, host: string, name: string, spec: ServerSpec): UnitDefinition {
  const http = servesHttp(spec);
  const node = spec.node ? `, node ${spec.node.rank} of ${spec.node.nnodes}` : '';
  const label = spec.worker === spec.role ? spec.role : spec.worker;
  const base: Omit<UnitDefinition, 'unitFileText'> = {
    key,
    host,
    role: spec.role,
    name,
    description: `SGLang ${label} (PD${node})`,
    fragmentPath: `/etc/systemd/system/${name}`,
    execStartArgv: serverArgv(spec),
    // Node rank ≥ 1 serves no HTTP, so nothing can be polled: its unit is active once the process runs.
    ...(http ? { execStartPostArgv: readinessWait(spec.port) } : {}),
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
  };
  return { ...base, unitFileText: renderUnitFile(base) };
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
  const base: Omit<UnitDefinition, 'unitFileText'> = {
    key,
    host,
    role: 'router',
    name,
    description: 'SGLang router (PD)',
    fragmentPath: `/etc/systemd/system/${name}`,
    execStartArgv: routerArgv(spec, engineMetrics),
    environment: ['RUST_LOG=info'],
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
  };
  return { ...base, unitFileText: renderUnitFile(base) };
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

/** Other units a real GPU host lists, so discovery code sees a realistic `systemctl list-units`. */
export const BACKGROUND_UNITS: ReadonlyArray<{ name: string; description: string; sub: string }> = [
  { name: 'cron.service', description: 'Regular background program processing daemon', sub: 'running' },
  { name: 'dbus.service', description: 'D-Bus System Message Bus', sub: 'running' },
  { name: 'nvidia-fabricmanager.service', description: 'NVIDIA fabric manager service', sub: 'running' },
  { name: 'nvidia-persistenced.service', description: 'NVIDIA Persistence Daemon', sub: 'running' },
  {
    name: 'prometheus-node-exporter.service',
    description: 'Prometheus exporter for machine metrics',
    sub: 'running',
  },
  { name: 'rsyslog.service', description: 'System Logging Service', sub: 'running' },
  { name: 'ssh.service', description: 'OpenBSD Secure Shell server', sub: 'running' },
  { name: 'systemd-journald.service', description: 'Journal Service', sub: 'running' },
  { name: 'systemd-logind.service', description: 'User Login Management', sub: 'running' },
  { name: 'systemd-resolved.service', description: 'Network Name Resolution', sub: 'running' },
  { name: 'systemd-timesyncd.service', description: 'Network Time Synchronization', sub: 'running' },
  {
    name: 'systemd-udevd.service',
    description: 'Rule-based Manager for Device Events and Files',
    sub: 'running',
  },
];

/** systemctl's unit name mangling: a bare name means NAME.service. */
export function mangleUnitName(name: string): string {
  if (/\.(service|socket|target|timer|mount|path|slice|scope|device|swap|automount)$/.test(name)) return name;
  if (name.includes('*') || name.includes('?') || name.includes('[')) return name;
  return `${name}.service`;
}
