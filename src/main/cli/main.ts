// `pd-console`: the same core for terminals and scripts.
import { createCore } from '../compose';
import type { Core } from '../core/core';
import type { DeploymentSummary, HostConfig, ServiceObservation } from '@shared/domain';
import { parseCommand } from './parse-command';

const USAGE = `usage: pd-console <command> [options]

commands:
  status [--host H] [--json]     systemd state, health and KV usage of prefill, decode and router
  kv [--host H] [--watch]        KV-cache usage of prefill and decode (every second with --watch)
  parse --format prometheus|openmetrics [--json] < FILE
                                 check an exposition read on stdin (exit 0 if it parses)

--host demo is the built-in simulated GPU host (default); otherwise an ssh alias or user@host[:port].
`;

export interface CliIo {
  stdout: (s: string) => void;
  stderr: (s: string) => void;
  readStdin: () => Promise<string>;
}

export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const [cmd, ...rest] = argv;
  if (!cmd || cmd === '--help' || cmd === '-h' || cmd === 'help') {
    io.stdout(USAGE);
    return cmd ? 0 : 2;
  }
  if (cmd === 'parse') {
    const r = parseCommand(rest, await io.readStdin());
    io.stdout(r.stdout);
    io.stderr(r.stderr);
    return r.exitCode;
  }
  const flags = parseFlags(rest);
  if (cmd === 'status' || cmd === 'kv') {
    const core = createCore({ shell: 'cli', intervalMs: 1000 });
    try {
      const summary = await openTarget(core, String(flags.host ?? 'demo'));
      if (cmd === 'status') return await status(core, summary, !!flags.json, io);
      return await kv(core, summary, !!flags.watch, io);
    } catch (err) {
      const e = err as Error & { hint?: string };
      io.stderr(`pd-console ${cmd}: ${e.message}\n${e.hint ? `hint: ${e.hint}\n` : ''}`);
      return 1;
    } finally {
      await core.shutdown();
    }
  }
  io.stderr(`pd-console: unknown command ${JSON.stringify(cmd)}\n${USAGE}`);
  return 2;
}

function parseFlags(args: string[]): Record<string, string | boolean> {
  const out: Record<string, string | boolean> = {};
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (!a.startsWith('--')) throw new Error(`unexpected argument ${a}`);
    const key = a.slice(2);
    const next = args[i + 1];
    if (next !== undefined && !next.startsWith('--')) {
      out[key] = next;
      i++;
    } else out[key] = true;
  }
  return out;
}

/** "demo", an ssh alias, or user@host[:port]. */
export function hostFromArg(arg: string): HostConfig {
  const m = /^(?:([^@]+)@)?([^:@]+)(?::(\d+))?$/.exec(arg);
  if (!m)
    throw new Error(`cannot read host ${JSON.stringify(arg)}: expected an ssh alias or user@host[:port]`);
  const [, user, hostname, port] = m;
  if (!user && !port) return { id: hostname, label: hostname, kind: 'ssh', alias: hostname };
  return {
    id: arg.replace(/[^A-Za-z0-9._@:-]/g, '_'),
    label: arg,
    kind: 'ssh',
    hostname,
    user,
    port: port ? Number(port) : undefined,
  };
}

async function openTarget(core: Core, host: string): Promise<DeploymentSummary> {
  return host === 'demo' ? core.openDemo({}) : core.connectHost({ host: hostFromArg(host) });
}

/** Waits for the first observation that has systemd state and, where configured, a scrape attempt. */
function nextObservation(
  core: Core,
  deploymentId: string,
  timeoutMs = 20_000,
): Promise<ServiceObservation[]> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      core.off('observation', on);
      reject(new Error(`no complete observation within ${timeoutMs / 1000} s`));
    }, timeoutMs);
    const on = (o: { deploymentId: string; services: ServiceObservation[] }): void => {
      if (o.deploymentId !== deploymentId || !o.services.every((s) => s.systemd || s.systemdError)) return;
      clearTimeout(timer);
      core.off('observation', on);
      resolve(o.services);
    };
    core.on('observation', on);
  });
}

async function status(core: Core, summary: DeploymentSummary, json: boolean, io: CliIo): Promise<number> {
  const services = await nextObservation(core, summary.deployment.id);
  const connection = (await core.listDeployments()).find(
    (d) => d.deployment.id === summary.deployment.id,
  )?.connection;
  if (json) {
    io.stdout(
      JSON.stringify(
        {
          host: summary.host.label,
          connection: connection?.state ?? 'idle',
          services: services.map((s) => ({
            role: s.role,
            unit: s.unit,
            activeState: s.systemd?.activeState ?? null,
            subState: s.systemd?.subState ?? null,
            health: s.health ? (s.health.ok ? 'ok' : s.health.detail) : null,
            ...(s.kv
              ? {
                  kv: {
                    usedTokens: s.kv.usedTokens,
                    capacityTokens: s.kv.capacityTokens,
                    ratio: s.kv.ratio,
                    source: s.kv.source,
                  },
                }
              : {}),
          })),
        },
        null,
        2,
      ) + '\n',
    );
  } else {
    io.stdout(`${summary.host.label} — ${connection?.state ?? 'idle'}\n`);
    for (const s of services) {
      const state = s.systemd
        ? `${s.systemd.activeState}/${s.systemd.subState}`
        : `unknown (${s.systemdError})`;
      const health = s.health
        ? s.health.ok
          ? 'healthy'
          : `unhealthy: ${s.health.detail}`
        : 'health not checked';
      io.stdout(
        `${s.role.padEnd(8)} ${s.unit.padEnd(28)} ${state.padEnd(20)} ${health}${s.kv ? `  KV ${kvText(s)}` : ''}\n`,
      );
      if (s.metrics && !s.metrics.ok)
        io.stdout(`         metrics: ${s.metrics.error}${s.metrics.hint ? ` — ${s.metrics.hint}` : ''}\n`);
    }
  }
  return services.every((s) => s.systemd?.activeState === 'active') ? 0 : 3;
}

function kvText(s: ServiceObservation): string {
  if (!s.kv) return s.kvMissing ? `n/a (${s.kvMissing.reason})` : 'n/a';
  const pct = (s.kv.ratio * 100).toFixed(1);
  return `${pct} % (${s.kv.usedTokens.toLocaleString('en-US')} / ${s.kv.capacityTokens.toLocaleString('en-US')} tokens, from ${s.kv.source})`;
}

async function kv(core: Core, summary: DeploymentSummary, watch: boolean, io: CliIo): Promise<number> {
  for (;;) {
    const services = await nextObservation(core, summary.deployment.id);
    const line = services
      .filter((s) => s.role !== 'router')
      .map((s) => `${s.role}: ${kvText(s)}`)
      .join('   ');
    io.stdout(`${new Date().toISOString()}  ${line}\n`);
    if (!watch) return services.some((s) => s.role !== 'router' && s.kv) ? 0 : 1;
  }
}

async function readAll(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Entry for the `pd-console` bin and `npm run cli`. */
export function cliMain(): void {
  void runCli(process.argv.slice(2), {
    stdout: (s) => process.stdout.write(s),
    stderr: (s) => process.stderr.write(s),
    readStdin: readAll,
  }).then((code) => process.exit(code));
}

if (typeof require !== 'undefined' && require.main === module) cliMain();
