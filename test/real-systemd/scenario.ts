// What the real-systemd tests install on the container: unit files in the forms operators really write (an
// EnvironmentFile with ${VAR}, a drop-in that replaces ExecStart, apostrophes and JSON in arguments, a wrapper
// script, `bash -c`, `env`, a crash loop, a `Restart=no` failure, a stopped unit), and the demo simulation whose
// endpoints the stand-in processes relay, so every answer a client reads is in the demo's real formats.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCli } from '../../src/main/cli/main';
import { systemClock } from '../../src/main/core/clock';
import { DemoHttpServers, DemoSimulation, DEMO_PORTS } from '../../src/main/demo';
import { bootRealSystemd, type BootOptions, type RealHost } from './container';

export const PYTHON = '/usr/bin/python3';
export const MODEL = '/models/DeepSeek-V4-Flash';
/** With an apostrophe: systemctl show prints it unquoted inside argv[]. */
export const SERVED_NAME = "DeepSeek's V4 Flash";
/** JSON with a quoted space: one argument to SGLang, several words to a naive split. */
export const JSON_OVERRIDE = '{"a": 1, "note": "a b"}';
export const API_KEY = 'sk-realhost-3f9c2a71d4e8b6a0';
export const PORTS = { prefill: 31100, decode: 31200, decodeOld: 31299, router: 31001, routerMetrics: 31901 };

/** Per-unit behaviour of a stand-in (pd_standin reads /etc/pd-sim/units.json by its unit name). */
export interface StandinBehaviour {
  loadSeconds?: number;
  shards?: number;
  /** Seconds the decode server's CUDA graph capture takes. */
  captureSeconds?: number;
  /** CPU seconds the server burns while it loads (systemd logs a unit's CPU time from one second on). */
  burnCpuS?: number;
  failWith?: string;
  crashAfterS?: number;
  invalidUtf8?: boolean;
}

export interface Scenario extends BootOptions {
  behaviour: Record<string, StandinBehaviour>;
}

type Files = NonNullable<BootOptions['files']>;

function unit(description: string, service: string[], extra: string[] = []): string {
  return [
    '[Unit]',
    `Description=${description}`,
    'After=network-online.target',
    ...extra,
    '',
    '[Service]',
    ...service,
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    '',
  ].join('\n');
}

/** systemd.syntax quoting of one word for an ExecStart= line. */
function q(word: string): string {
  if (/^[A-Za-z0-9_@%+=:,./${}-]+$/.test(word)) return word;
  return `"${word.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

function serverArgs(
  a: string,
  role: 'prefill' | 'decode',
  port: string,
  gpu: number,
  metrics = true,
): string[] {
  return [
    '-m',
    'sglang.launch_server',
    '--model-path',
    MODEL,
    '--served-model-name',
    SERVED_NAME,
    '--host',
    a,
    '--port',
    port,
    '--tp',
    '4',
    '--base-gpu-id',
    String(gpu),
    '--disaggregation-mode',
    role,
    ...(role === 'prefill' ? ['--disaggregation-bootstrap-port', '8998'] : []),
    ...(metrics ? ['--enable-metrics'] : []),
    '--json-model-override-args',
    JSON_OVERRIDE,
    '--api-key',
    API_KEY,
  ];
}

function routerArgs(a: string): string[] {
  return [
    '-m',
    'sglang_router.launch_router',
    '--pd-disaggregation',
    '--prefill',
    `http://${a}:${PORTS.prefill}`,
    '8998',
    '--decode',
    `http://${a}:${PORTS.decode}`,
    '--host',
    a,
    '--port',
    String(PORTS.router),
    '--prometheus-host',
    a,
    '--prometheus-port',
    String(PORTS.routerMetrics),
  ];
}

/**
 * The 1P1D host of the issue: prefill with its port from an EnvironmentFile (`${PREFILL_PORT}`), apostrophes
 * and JSON in its arguments; decode whose drop-in replaces ExecStart (the unit file's own port is stale); the
 * router behind a wrapper script that `exec`s it. All Type=simple, all enabled.
 */
export function realHost1P1D(address: string, behaviour: Record<string, StandinBehaviour> = {}): Scenario {
  const a = address;
  const files: Files = {
    '/etc/sglang/dsv4.env': `# written by the operator\nPREFILL_PORT=${PORTS.prefill}\nMODEL_DIR=${MODEL}\n`,
    '/etc/systemd/system/dsv4-prefill.service': unit('DeepSeek V4 prefill (SGLang)', [
      'Type=simple',
      'EnvironmentFile=/etc/sglang/dsv4.env',
      'Environment=SGLANG_DISAGGREGATION_BOOTSTRAP_TIMEOUT=300',
      `ExecStart=${[PYTHON, ...serverArgs(a, 'prefill', '${PREFILL_PORT}', 0)].map(q).join(' ')}`,
      'Restart=on-failure',
      'RestartSec=5',
    ]),
    '/etc/systemd/system/dsv4-decode.service': unit('DeepSeek V4 decode (SGLang)', [
      'Type=simple',
      `ExecStart=${[PYTHON, ...serverArgs(a, 'decode', String(PORTS.decodeOld), 4)].map(q).join(' ')}`,
      'Restart=on-failure',
    ]),
    '/etc/systemd/system/dsv4-decode.service.d/override.conf': [
      '[Service]',
      'ExecStart=',
      `ExecStart=${[PYTHON, ...serverArgs(a, 'decode', String(PORTS.decode), 4)].map(q).join(' ')}`,
      '',
    ].join('\n'),
    '/opt/sglang/run-router.sh': {
      content: `#!/bin/sh\n# Operator's wrapper: sets up the environment, then becomes the router.\nexport RUST_LOG=info\nexec ${[PYTHON, ...routerArgs(a)].join(' ')}\n`,
      mode: 0o755,
    },
    '/etc/systemd/system/dsv4-router.service': unit(
      'SGLang router',
      ['Type=simple', 'ExecStart=/opt/sglang/run-router.sh', 'Restart=on-failure'],
      ['Wants=dsv4-prefill.service dsv4-decode.service'],
    ),
  };
  return {
    files,
    enable: ['dsv4-prefill.service', 'dsv4-decode.service', 'dsv4-router.service'],
    behaviour: { 'dsv4-prefill.service': { shards: 64 }, ...behaviour },
  };
}

/** The demo simulation's endpoints on real loopback ports, for the stand-ins to relay. */
export interface SimUpstream {
  sim: DemoSimulation;
  servers: DemoHttpServers;
  /** upstream.json for the container. */
  config(address: string): string;
  stop(): Promise<void>;
}

export async function startSimUpstream(): Promise<SimUpstream> {
  const sim = new DemoSimulation({ clock: systemClock, routerEra: 'sglang-router-0.2.4' });
  const servers = new DemoHttpServers(sim);
  const real = await servers.listen('127.0.0.1');
  const url = (port: number): string => `http://127.0.0.1:${real[port]}`;
  return {
    sim,
    servers,
    config: (a) =>
      JSON.stringify({
        prefill: url(DEMO_PORTS.prefill),
        decode: url(DEMO_PORTS.decode),
        router_api: url(DEMO_PORTS.routerApi),
        router_metrics: url(DEMO_PORTS.routerMetrics),
        // The simulation names its workers by its own addresses; the container's router knows them by these.
        rewrite: {
          [`http://127.0.0.1:${DEMO_PORTS.prefill}`]: `http://${a}:${PORTS.prefill}`,
          [`http://127.0.0.1:${DEMO_PORTS.decode}`]: `http://${a}:${PORTS.decode}`,
        },
      }),
    stop: () => servers.close(),
  };
}

export interface RealDeployment {
  host: RealHost;
  upstream: SimUpstream;
  /** A home whose ~/.ssh/config names the container `alias` (HostName, User, IdentityFile, known_hosts). */
  sshHome: string;
  alias: string;
  stop(): Promise<void>;
}

/**
 * Boots the container with `make(address)`'s units and an ssh home that reaches it as `alias`. The address is
 * only known once taken, so the scenario is built from a placeholder and rewritten.
 */
export async function bootRealDeployment(
  make: (address: string) => Scenario,
  alias = 'gpu-realhost',
): Promise<RealDeployment> {
  const upstream = await startSimUpstream();
  const PLACEHOLDER = '127.0.0.254';
  const s = make(PLACEHOLDER);
  let host: RealHost;
  try {
    host = await bootRealSystemd({
      addressed: (address) => {
        const swap = (t: string): string => t.split(PLACEHOLDER).join(address);
        const files: Files = {};
        for (const [f, spec] of Object.entries(s.files ?? {}))
          files[f] = typeof spec === 'string' ? swap(spec) : { ...spec, content: swap(spec.content) };
        files['/etc/pd-sim/upstream.json'] = upstream.config(address);
        files['/etc/pd-sim/units.json'] = JSON.stringify(s.behaviour);
        return files;
      },
      enable: s.enable,
      unifiedCgroup: s.unifiedCgroup,
    });
  } catch (err) {
    await upstream.stop();
    throw err;
  }
  const h = host;
  const sshHome = mkdtempSync(path.join(os.tmpdir(), 'pd-real-home-'));
  const sshDir = path.join(sshHome, '.ssh');
  mkdirSync(sshDir, { mode: 0o700 });
  writeFileSync(path.join(sshDir, 'known_hosts'), `${h.address} ${h.hostKeyLine}\n`, { mode: 0o600 });
  writeFileSync(
    path.join(sshDir, 'config'),
    [
      `Host ${alias}`,
      `  HostName ${h.address}`,
      `  User ${h.user}`,
      `  IdentityFile ${h.keyFile}`,
      `  UserKnownHostsFile ${path.join(sshDir, 'known_hosts')}`,
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
  return {
    host: h,
    upstream,
    sshHome,
    alias,
    stop: async () => {
      await h.stop();
      await upstream.stop();
      rmSync(sshHome, { recursive: true, force: true });
    },
  };
}

/** Waits (inside the container, on ss's own answer) until every port listens; at most `seconds`. */
export async function waitListening(host: RealHost, ports: number[], seconds = 60): Promise<void> {
  const test = ports.map((p) => `ss -ltnH | grep -q ':${p} '`).join(' && ');
  const r = await host.root(`timeout ${seconds} sh -c "until ${test}; do sleep 0.1; done"`);
  if (r.code !== 0)
    throw new Error(
      `ports ${ports.join(', ')} did not all listen within ${seconds} s:\n${(await host.root('ss -ltn; systemctl --no-pager list-units "dsv4*" "sgl*"')).stdout}`,
    );
}

/** Runs the CLI against the deployment's alias; resolves with the exit code and what it printed. */
export async function cliOn(
  d: RealDeployment,
  argv: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const previous = process.env.PD_CONSOLE_SSH_HOME;
  process.env.PD_CONSOLE_SSH_HOME = d.sshHome;
  try {
    const code = await runCli(
      argv,
      { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s), readStdin: async () => '' },
      { sshHome: d.sshHome },
    );
    return { code, stdout, stderr };
  } finally {
    if (previous === undefined) delete process.env.PD_CONSOLE_SSH_HOME;
    else process.env.PD_CONSOLE_SSH_HOME = previous;
  }
}

/**
 * The same deployment with each server behind another wrapper: prefill in `bash -c` without exec (bash stays the
 * MainPID, python its child), decode through `/usr/bin/env VAR=… python3 …`, the router in `bash -c 'exec …'`.
 */
export function realHostWrappers(address: string): Scenario {
  const base = realHost1P1D(address);
  const a = address;
  const server = (role: 'prefill' | 'decode', port: number, gpu: number): string =>
    [PYTHON, ...serverArgs(a, role, String(port), gpu)].map(shq).join(' ');
  return {
    ...base,
    files: {
      '/etc/systemd/system/dsv4-prefill.service': unit('DeepSeek V4 prefill (SGLang)', [
        'Type=simple',
        // The command after the server keeps bash from exec'ing it (bash execs a -c script's last command).
        `ExecStart=/bin/bash -c ${q(`cd /tmp && ${server('prefill', PORTS.prefill, 0)}; echo "server exited: $$?"`)}`,
        'Restart=on-failure',
      ]),
      '/etc/systemd/system/dsv4-decode.service': unit('DeepSeek V4 decode (SGLang)', [
        'Type=simple',
        `ExecStart=/usr/bin/env CUDA_VISIBLE_DEVICES=4,5,6,7 ${[PYTHON, ...serverArgs(a, 'decode', String(PORTS.decode), 0)].map(q).join(' ')}`,
        'Restart=on-failure',
      ]),
      '/etc/systemd/system/dsv4-router.service': unit('SGLang router', [
        'Type=simple',
        `ExecStart=/bin/bash -c ${q(`exec ${[PYTHON, ...routerArgs(a)].map(shq).join(' ')}`)}`,
        'Restart=on-failure',
      ]),
    },
  };
}

/** POSIX shell quoting of one word, for a `bash -c` script. */
function shq(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
