// The demo host's optional prometheus.service: Debian's unit file and /etc/default/prometheus as the package
// installs them (`ExecStart=/usr/bin/prometheus $ARGS`), with ARGS naming the listen address and config file
// the test chose, and a forward of that simulated port to the REAL Prometheus the test started on a loopback
// port. So discovery reads a real Debian command line over SSH and the app's client talks to a real engine
// through the SSH tunnel, as on a GPU host. Nothing here invents output: the unit text is Debian's, every
// answer on the port is the real Prometheus'.
import net from 'node:net';
import type { Duplex } from 'node:stream';
import type { DemoMachine } from './machine';
import type { DemoSimulation } from './simulation';

export interface DemoPrometheusOption {
  /** What ARGS gives as --web.listen-address on the simulated host, e.g. '127.0.0.1:9090'. */
  listen: string;
  /** --config.file on the simulated host; `cat` of it answers `configYaml`. Default /etc/prometheus/prometheus.yml. */
  configFile?: string;
  /** The config the real Prometheus runs with (what `cat CONFIGFILE` shows on the demo host). */
  configYaml?: string;
  /** --storage.tsdb.retention.time in ARGS, when set. */
  retention?: string;
  /** The real 127.0.0.1 port the test's Prometheus listens on: forwards to `listen`'s port reach it. */
  realPort: number;
}

/** A unit outside the simulation: listed, shown and cat-able like a real one, always active. */
export interface StaticDemoUnit {
  name: string;
  description: string;
  fragmentPath: string;
  unitFileText: string;
  /** The ExecStart= argv as systemd keeps it (before $VAR expansion). */
  execStartArgv: string[];
  environmentFiles: string[];
}

interface Installed {
  units: StaticDemoUnit[];
  files: Map<string, string>;
  /** Simulated port → real loopback port. */
  forwards: Map<number, number>;
}

const installed = new WeakMap<DemoSimulation, Installed>();

// /usr/lib/systemd/system/prometheus.service from Debian's prometheus 2.42.0+ds-5 package.
const DEBIAN_UNIT = `[Unit]
Description=Monitoring system and time series database
Documentation=https://prometheus.io/docs/introduction/overview/ man:prometheus(1)
After=time-sync.target

[Service]
Restart=on-failure
User=prometheus
EnvironmentFile=/etc/default/prometheus
ExecStart=/usr/bin/prometheus $ARGS
ExecReload=/bin/kill -HUP $MAINPID
TimeoutStopSec=20s
SendSIGKILL=no

# systemd hardening-options
AmbientCapabilities=
CapabilityBoundingSet=
DeviceAllow=/dev/null rw
DevicePolicy=strict
LimitMEMLOCK=0
LimitNOFILE=32768
LockPersonality=true
MemoryDenyWriteExecute=true
NoNewPrivileges=true
PrivateDevices=true
PrivateTmp=true
PrivateUsers=true
ProtectControlGroups=true
ProtectHome=true
ProtectKernelModules=true
ProtectKernelTunables=true
ProtectSystem=full
RemoveIPC=true
RestrictNamespaces=true
RestrictRealtime=true
SystemCallArchitectures=native

[Install]
WantedBy=multi-user.target
`;

export function installDemoPrometheus(sim: DemoSimulation, opt: DemoPrometheusOption): void {
  const m = /:(\d+)$/.exec(opt.listen);
  if (!m) throw new RangeError(`demo prometheus: listen ${JSON.stringify(opt.listen)} is not HOST:PORT`);
  const configFile = opt.configFile ?? '/etc/prometheus/prometheus.yml';
  const args = [
    `--config.file=${configFile}`,
    '--storage.tsdb.path=/var/lib/prometheus/metrics2/',
    `--web.listen-address=${opt.listen}`,
    ...(opt.retention ? [`--storage.tsdb.retention.time=${opt.retention}`] : []),
  ];
  const files = new Map<string, string>([
    [
      '/etc/default/prometheus',
      `# Set the command-line arguments to pass to the server.\n# Due to shell escaping, to pass backslashes for regexes, you need to double\n# them (\\\\d for \\d). If running under systemd, you need to double them again\n# (\\\\\\\\d to mean \\d), and escape newlines too.\nARGS="${args.join(' ')}"\n`,
    ],
    ['/usr/lib/systemd/system/prometheus.service', DEBIAN_UNIT],
  ]);
  if (opt.configYaml !== undefined) files.set(configFile, opt.configYaml);
  installed.set(sim, {
    units: [
      {
        name: 'prometheus.service',
        description: 'Monitoring system and time series database',
        fragmentPath: '/usr/lib/systemd/system/prometheus.service',
        unitFileText: DEBIAN_UNIT,
        execStartArgv: ['/usr/bin/prometheus', '$ARGS'],
        environmentFiles: ['/etc/default/prometheus'],
      },
    ],
    files,
    forwards: new Map([[Number(m[1]), opt.realPort]]),
  });
}

export function staticUnitsOf(sim: DemoMachine): readonly StaticDemoUnit[] {
  return installed.get(sim.world)?.units ?? [];
}

export function staticFileOf(sim: DemoMachine, path: string): string | null {
  return installed.get(sim.world)?.files.get(path) ?? null;
}

/** Pipes a direct-tcpip channel to the real process behind a simulated port; false when none is there. */
export function forwardToReal(sim: DemoMachine, port: number, channel: Duplex): boolean {
  const real = installed.get(sim.world)?.forwards.get(port);
  if (real === undefined) return false;
  const sock = net.connect(real, '127.0.0.1');
  sock.on('error', () => channel.destroy());
  channel.on('error', () => sock.destroy());
  channel.on('close', () => sock.destroy());
  sock.on('close', () => channel.destroy());
  channel.pipe(sock).pipe(channel);
  return true;
}

export function hasRealForward(sim: DemoMachine, port: number): boolean {
  return installed.get(sim.world)?.forwards.has(port) ?? false;
}
