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

export interface UnitDefinition {
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
  /** HTTP port its API listens on. */
  port: number;
  unitFileText: string;
}

export interface UnitOptions {
  dpRanks: number;
  metricsDisabled: ReadonlySet<ServerRole>;
  /** smg ≥ 1.7 polls the workers' loads into smg_engine_* gauges only when started with --engine-metrics. */
  engineMetrics?: boolean;
}

function serverArgv(role: ServerRole, opts: UnitOptions): string[] {
  const port = role === 'prefill' ? PORTS.prefill : PORTS.decode;
  const argv = [
    PYTHON,
    '-m',
    'sglang.launch_server',
    '--model-path',
    MODEL_PATH,
    '--served-model-name',
    MODEL_NAME,
    '--tp-size',
    String(TP_SIZE),
    '--base-gpu-id',
    role === 'prefill' ? '0' : '4',
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
    '--disaggregation-mode',
    role,
  ];
  if (role === 'prefill') argv.push('--disaggregation-bootstrap-port', String(PORTS.bootstrap));
  argv.push('--disaggregation-transfer-backend', 'mooncake', '--disaggregation-ib-device', 'mlx5_0');
  if (role === 'decode' && opts.dpRanks > 1)
    argv.push('--dp-size', String(opts.dpRanks), '--enable-dp-attention');
  if (!opts.metricsDisabled.has(role)) argv.push('--enable-metrics');
  return argv;
}

function routerArgv(opts: UnitOptions): string[] {
  return [
    PYTHON,
    '-m',
    'sglang_router.launch_router',
    '--pd-disaggregation',
    '--prefill',
    `http://127.0.0.1:${PORTS.prefill}`,
    String(PORTS.bootstrap),
    '--decode',
    `http://127.0.0.1:${PORTS.decode}`,
    '--host',
    '0.0.0.0',
    '--port',
    String(PORTS.routerApi),
    '--prometheus-host',
    '127.0.0.1',
    '--prometheus-port',
    String(PORTS.routerMetrics),
    '--health-check-interval-secs',
    String(ROUTER_HEALTH_INTERVAL_S),
    ...(opts.engineMetrics ? ['--engine-metrics'] : []),
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

export function buildUnits(opts: UnitOptions): Record<DemoRole, UnitDefinition> {
  const server = (role: ServerRole): UnitDefinition => {
    const base: Omit<UnitDefinition, 'unitFileText'> = {
      role,
      name: `sglang-${role}.service`,
      description: `SGLang ${role} (PD)`,
      fragmentPath: `/etc/systemd/system/sglang-${role}.service`,
      execStartArgv: serverArgv(role, opts),
      execStartPostArgv: readinessWait(role === 'prefill' ? PORTS.prefill : PORTS.decode),
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
      gpus: role === 'prefill' ? [0, 1, 2, 3] : [4, 5, 6, 7],
      port: role === 'prefill' ? PORTS.prefill : PORTS.decode,
    };
    return { ...base, unitFileText: renderUnitFile(base) };
  };
  const routerBase: Omit<UnitDefinition, 'unitFileText'> = {
    role: 'router',
    name: 'sglang-router.service',
    description: 'SGLang router (PD)',
    fragmentPath: '/etc/systemd/system/sglang-router.service',
    execStartArgv: routerArgv(opts),
    environment: ['RUST_LOG=info'],
    restart: 'on-failure',
    restartSec: 5,
    timeoutStartSec: 90,
    timeoutStopSec: 30,
    startLimitIntervalSec: 600,
    startLimitBurst: 5,
    after: ['network-online.target', 'sglang-prefill.service', 'sglang-decode.service'],
    wants: ['sglang-prefill.service', 'sglang-decode.service'],
    gpus: [],
    port: PORTS.routerApi,
  };
  return {
    prefill: server('prefill'),
    decode: server('decode'),
    router: { ...routerBase, unitFileText: renderUnitFile(routerBase) },
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
