// `pd-console export prometheus-config|grafana-dashboard [--host H] [--out FILE]`: the generated prometheus.yml
// (a job per role, every endpoint discovery found) and the Grafana dashboard with the console's panels, from a
// terminal — the same requests the Prometheus panel's buttons make.
import { promises as fs } from 'node:fs';
import { createApp, type App } from '../compose';

export const EXPORT_USAGE = `usage: pd-console export prometheus-config [--host H] [--out FILE]
       pd-console export grafana-dashboard [--host H] [--out FILE]

  prometheus-config   a prometheus.yml whose scrape_configs scrape every prefill, decode and router endpoint
                      discovery found (one job per role: sglang-prefill, sglang-decode, sglang-router; labels
                      instance=HOST:PORT, worker, host, role), addressed as a Prometheus on H dials them
  grafana-dashboard   a Grafana dashboard JSON with the console's panels (KV cache, latency, throughput,
                      queues, router), templated by each role's job and instance
  --out FILE          write to FILE (refused if it exists) instead of stdout
exit status: 0 written · 1 the host or FILE cannot be used · 2 bad usage
`;

export interface ExportIo {
  stdout: (s: string) => void;
  stderr: (s: string) => void;
}

export async function exportCommand(
  argv: string[],
  io: ExportIo,
  deps: { app?: App; open: (app: App, host: string) => Promise<{ deployment: { id: string } }> },
): Promise<number> {
  const [what, ...rest] = argv;
  if (!what || what === '--help' || what === '-h') {
    io.stdout(EXPORT_USAGE);
    return what ? 0 : 2;
  }
  if (what !== 'prometheus-config' && what !== 'grafana-dashboard') {
    io.stderr(`pd-console export: unknown export ${JSON.stringify(what)}\n${EXPORT_USAGE}`);
    return 2;
  }
  let host = 'demo';
  let out: string | undefined;
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i]!;
    if ((a === '--host' || a === '--out') && rest[i + 1] !== undefined) {
      if (a === '--host') host = rest[++i]!;
      else out = rest[++i]!;
    } else {
      io.stderr(`pd-console export: unexpected ${JSON.stringify(a)}\n${EXPORT_USAGE}`);
      return 2;
    }
  }
  const app = deps.app ?? createApp({ shell: 'cli', intervalMs: 1000 });
  try {
    const summary = await deps.open(app, host);
    const file =
      what === 'prometheus-config'
        ? await app.handlers.exportPrometheusConfig({ deploymentId: summary.deployment.id })
        : await app.handlers.exportGrafanaDashboard({ deploymentId: summary.deployment.id });
    if (out === undefined) {
      io.stdout(file.text);
      return 0;
    }
    try {
      await fs.writeFile(out, file.text, { flag: 'wx' });
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      io.stderr(
        `pd-console export: cannot write ${out}: ${e.code === 'EEXIST' ? 'it exists (choose another name or remove it)' : e.message}\n`,
      );
      return 1;
    }
    io.stderr(`wrote ${out} (${Buffer.byteLength(file.text)} bytes)\n`);
    return 0;
  } catch (err) {
    const e = err as Error & { hint?: string };
    io.stderr(`pd-console export ${what}: ${e.message}\n${e.hint ? `hint: ${e.hint}\n` : ''}`);
    return 1;
  } finally {
    if (!deps.app) await app.shutdown();
  }
}
