// Debian's real Prometheus for tests: started on 127.0.0.1 with a given config and storage dir (optionally
// seeded with TSDB blocks made by `promtool tsdb create-blocks-from openmetrics`), ready once /-/ready says so,
// stopped (SIGTERM, then SIGKILL) and waited for on dispose. Tests that need it skip with the reason when the
// binary is missing (`.ci/run` installs the `prometheus` package).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import yaml from 'js-yaml';

export const PROMETHEUS_BIN = '/usr/bin/prometheus';
export const PROMTOOL_BIN = '/usr/bin/promtool';

/** Why the real Prometheus cannot run here, or null when it can. */
export function prometheusUnavailableReason(): string | null {
  for (const bin of [PROMETHEUS_BIN, PROMTOOL_BIN]) {
    try {
      accessSync(bin, constants.X_OK);
    } catch {
      return `${bin} is not installed (apt-get install prometheus; .ci/run does) — tests against the real Prometheus are skipped`;
    }
  }
  return null;
}

export interface PrometheusServer {
  /** http://127.0.0.1:PORT */
  url: string;
  port: number;
  storageDir: string;
  configFile: string;
  /** The command line it runs, as a unit's ExecStart would carry it. */
  argv: string[];
  /** Everything it logged so far (stderr), for failure messages. */
  log(): string;
  stop(): Promise<void>;
}

export interface StartPrometheusOptions {
  /** The config, or a function of the port it will listen on (for a job that scrapes Prometheus itself). */
  configYaml: string | ((port: number) => string);
  /** Storage dir; a fresh temp dir when absent (removed on stop). */
  storageDir?: string;
  /** A dir of TSDB blocks (each a ULID dir) copied into storage before start. */
  blocksDir?: string;
  retention?: string;
  /** Listen on this port (e.g. one a demo host forwards to); default a free one, retried if taken. */
  port?: number;
  extraArgs?: string[];
  readyTimeoutMs?: number;
}

export async function startPrometheus(opts: StartPrometheusOptions): Promise<PrometheusServer> {
  const reason = prometheusUnavailableReason();
  if (reason) throw new Error(reason);
  const work = await mkdtemp(path.join(os.tmpdir(), 'pd-prom-'));
  const storageDir = opts.storageDir ?? path.join(work, 'data');
  await mkdir(storageDir, { recursive: true });
  if (opts.blocksDir) {
    for (const block of await readdir(opts.blocksDir)) {
      await cp(path.join(opts.blocksDir, block), path.join(storageDir, block), { recursive: true });
    }
  }
  const configFile = path.join(work, 'prometheus.yml');
  // A port taken between probing and binding makes Prometheus exit at once: try again on another.
  let lastLog = '';
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = opts.port ?? (await freePort());
    await writeFile(
      configFile,
      typeof opts.configYaml === 'string' ? opts.configYaml : opts.configYaml(port),
    );
    const argv = [
      PROMETHEUS_BIN,
      `--config.file=${configFile}`,
      `--storage.tsdb.path=${storageDir}`,
      `--web.listen-address=127.0.0.1:${port}`,
      `--storage.tsdb.retention.time=${opts.retention ?? '15d'}`,
      ...(opts.extraArgs ?? []),
    ];
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    child.stderr!.on('data', (c: Buffer) => {
      log = (log + c.toString('utf8')).slice(-64 * 1024);
    });
    const url = `http://127.0.0.1:${port}`;
    const ready = await waitReady(url, child, opts.readyTimeoutMs ?? 60_000);
    if (ready === 'ready') {
      return {
        url,
        port,
        storageDir,
        configFile,
        argv,
        log: () => log,
        stop: async () => {
          await stopChild(child);
          await rm(work, { recursive: true, force: true });
        },
      };
    }
    await stopChild(child);
    lastLog = log;
    if (!/address already in use/.test(log)) {
      await rm(work, { recursive: true, force: true });
      throw new Error(`prometheus did not become ready (${ready}); its log ends:\n${log.slice(-4000)}`);
    }
  }
  await rm(work, { recursive: true, force: true });
  throw new Error(`prometheus found no free port in 3 tries; its log ends:\n${lastLog.slice(-2000)}`);
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

async function waitReady(url: string, child: ChildProcess, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let exited: string | null = null;
  child.once('exit', (code, sig) => (exited = `exited with ${sig ?? code}`));
  while (Date.now() < deadline) {
    if (exited) return exited;
    if ((await getStatus(`${url}/-/ready`)) === 200) return 'ready';
    await new Promise((r) => setTimeout(r, 150));
  }
  return exited ?? `no 200 from /-/ready within ${timeoutMs / 1000} s`;
}

function getStatus(url: string): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get(url, { timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(0));
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await gone;
  clearTimeout(t);
}

/** Runs promtool; resolves with its exit code and output rather than throwing, so tests can show what it said. */
export function promtool(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(PROMTOOL_BIN, args, { maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * The demo host's endpoints listen on real ephemeral ports (DemoHost.httpPorts: simulated → real), while the
 * config the app generates names the simulated ones, as a GPU host's would. This adds to every job the
 * relabelling that sends a scrape of 127.0.0.1:SIMULATED to the real port, leaving the config's own target
 * (the `__address__` /api/v1/targets reports under discoveredLabels) as the app wrote it.
 */
export function withDemoPorts(configYaml: string, httpPorts: Record<number, number>): string {
  const doc = yaml.load(configYaml) as { scrape_configs?: Array<Record<string, unknown>> };
  for (const job of doc.scrape_configs ?? []) {
    const relabel = (job.relabel_configs as unknown[] | undefined) ?? [];
    for (const [sim, real] of Object.entries(httpPorts)) {
      relabel.push({
        source_labels: ['__address__'],
        regex: `(127\\.0\\.0\\.1|localhost):${sim}`,
        target_label: '__address__',
        replacement: `127.0.0.1:${real}`,
      });
    }
    job.relabel_configs = relabel;
  }
  return yaml.dump(doc, { lineWidth: 120 });
}
