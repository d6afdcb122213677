// `pd-console export prometheus-config|grafana-dashboard [--host H] [--out FILE]`: the generated prometheus.yml
// (a job per role, every endpoint discovery found) and the Grafana dashboard with the console's panels, from a
// terminal — the same requests the Prometheus panel's buttons make.
import { promises as fs } from 'node:fs';
import { basename } from 'node:path';
import { defineCommand, parseCommandLine, usageText, UsageError } from './cli-args';
import { HOST_OPTION, hostArg, isSimulated, openTarget } from './target';
import { withApp, type CliAppDeps } from './cli-app';

export const EXPORT_USAGE = `usage: pd-console export prometheus-config [--host H] [--out FILE]
       pd-console export grafana-dashboard [--host H] [--out FILE]

  prometheus-config   a prometheus.yml whose scrape_configs scrape every prefill, decode and router endpoint
                      discovery found (one job per role: sglang-prefill, sglang-decode, sglang-router; labels
                      instance=HOST:PORT, worker, host, role); a deployment on several hosts is addressed
                      as its router dials the workers, so one Prometheus (on the router's host or any host
                      that reaches them) scrapes all; the file's head says where to run it and how to install it
  grafana-dashboard   a Grafana dashboard JSON with the console's panels (KV cache, latency, throughput,
                      queues, router), templated by each role's job and instance
  --out FILE          write to FILE (refused if it exists) instead of stdout
exit status: 0 written · 1 the host or FILE cannot be used · 2 bad usage
`;

export const EXPORT_COMMAND = defineCommand({
  name: 'export',
  usage: EXPORT_USAGE,
  options: { host: HOST_OPTION, out: { type: 'string', needs: 'a file name' } },
});

export interface ExportIo {
  stdout: (s: string) => void;
  stderr: (s: string) => void;
}

export async function exportCommand(argv: string[], io: ExportIo, deps: CliAppDeps = {}): Promise<number> {
  const usage = (why: string): number => {
    io.stderr(usageText(EXPORT_COMMAND, why));
    return 2;
  };
  let parsed;
  try {
    parsed = parseCommandLine(EXPORT_COMMAND, argv);
  } catch (err) {
    if (err instanceof UsageError) return usage(err.message);
    throw err;
  }
  const [what, ...extra] = parsed.positionals;
  if (parsed.help || !what) {
    io.stdout(EXPORT_USAGE);
    return parsed.help ? 0 : 2;
  }
  if (what !== 'prometheus-config' && what !== 'grafana-dashboard')
    return usage(`unknown export ${JSON.stringify(what)}`);
  if (extra.length) return usage(`unexpected ${JSON.stringify(extra[0])}`);
  const host = hostArg(parsed.values.host);
  const out = parsed.values.out;
  return withApp(deps, {}, async (app) => {
    try {
      const summary = await openTarget(app, host);
      // The file itself is the output: that it describes the simulated host is said beside it.
      if (isSimulated(summary.host))
        io.stderr(`pd-console export: from ${summary.host.label}, not a real deployment\n`);
      const file =
        what === 'prometheus-config'
          ? await app.handlers.exportPrometheusConfig({ deploymentId: summary.deployment.id })
          : await app.handlers.exportGrafanaDashboard({ deploymentId: summary.deployment.id });
      if (out === undefined) {
        io.stdout(file.text);
        return 0;
      }
      // The install commands name the file by the name it is written under.
      const named = (t: string): string => t.split(file.fileName).join(basename(out));
      try {
        await fs.writeFile(out, named(file.text), { flag: 'wx' });
      } catch (err) {
        const e = err as NodeJS.ErrnoException;
        io.stderr(
          `pd-console export: cannot write ${out}: ${e.code === 'EEXIST' ? 'it exists (choose another name or remove it)' : e.message}\n`,
        );
        return 1;
      }
      io.stderr(`wrote ${out} (${Buffer.byteLength(file.text)} bytes)\n`);
      for (const line of file.notes ?? []) io.stderr(`${named(line)}\n`);
      return 0;
    } catch (err) {
      const e = err as Error & { hint?: string };
      io.stderr(`pd-console export ${what}: ${e.message}\n${e.hint ? `hint: ${e.hint}\n` : ''}`);
      return 1;
    }
  });
}
