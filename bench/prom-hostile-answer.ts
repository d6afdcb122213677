// Peak memory of reading Prometheus answers built to hurt: a ~30 MB range answer holding 1.4 M points for a
// query whose grid has about 1,000, and an answer of 50,000 series. A real HTTP server in this process serves
// each body, made for the range it is asked (and answering the history's family probe with every family asked).
// Measured twice, each in a fresh process: the client alone (its getrusage maxrss), and `pd-console history
// --prometheus URL --direct` as an operator runs it (/usr/bin/time's maximum resident set size).
// Run alone: `npx tsx --tsconfig tsconfig.node.json bench/prom-hostile-answer.ts`.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

type Hostile = 'baseline' | 'points' | 'series';

const START = 1_700_000_000;
const STEP = 60;
const GRID = 1000; // the client's own query: (end - start) / step + 1 = 1,001 points

/** The query_range answer of each case for [start, end] at `step`. */
function rangeAnswer(kind: Hostile, start: number, end: number, step: number): string {
  const wrap = (series: string[]): string =>
    `{"status":"success","data":{"resultType":"matrix","result":[${series.join(',')}]}}`;
  if (kind === 'points') {
    // 1.4 M samples packed into the asked range: ~1,400 per step.
    const n = 1_400_000;
    const pts: string[] = [];
    for (let i = 0; i < n; i++) pts.push(`[${(start + (i * (end - start)) / n).toFixed(3)},"0.${i % 10}"]`);
    return wrap([`{"metric":{},"values":[${pts.join(',')}]}`]);
  }
  const series = kind === 'series' ? 50_000 : 1;
  const points = kind === 'series' ? 20 : Math.floor((end - start) / step) + 1;
  const out: string[] = [];
  for (let s = 0; s < series; s++) {
    const vals = Array.from({ length: points }, (_, i) => `[${start + i * step},"0.${s % 7}"]`).join(',');
    out.push(
      `{"metric":{"__name__":"sglang:num_running_reqs","job":"sglang-decode","instance":"10.1.${s >> 8}.${s & 255}:30000","worker":"decode-${s}"},"values":[${vals}]}`,
    );
  }
  return wrap(out);
}

/** A Prometheus answering query_range with the hostile body, and every other call as an empty success. */
async function hostileServer(kind: Hostile): Promise<{ url: string; close: () => void }> {
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const form = new URLSearchParams(raw);
      let body: string;
      if (req.url?.startsWith('/api/v1/query_range'))
        body = rangeAnswer(
          kind,
          Number(form.get('start')),
          Number(form.get('end')),
          Number(form.get('step')),
        );
      else if (req.url?.startsWith('/api/v1/query')) {
        // The history's probe of which metric families exist: all of them.
        const m = /__name__=~"([^"]+)"/.exec(form.get('query') ?? '');
        const names = m ? m[1]!.replace(/\\\\/g, '').split('|') : [];
        const result = names.map((n) => ({ metric: { __name__: n }, value: [START, '1'] }));
        body = JSON.stringify({ status: 'success', data: { resultType: 'vector', result } });
      } else if (req.url?.startsWith('/api/v1/targets'))
        body = '{"status":"success","data":{"activeTargets":[]}}';
      else body = '{"status":"success","data":{}}';
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

async function child(base: string): Promise<void> {
  const { PromHttpClient } = await import('../src/main/core/prometheus/http-client');
  const client = new PromHttpClient({ baseUrl: base, label: 'hostile', timeoutMs: 120_000 });
  let outcome: string;
  try {
    const r = await client.queryRange('x', START, START + GRID * STEP, STEP);
    const points = r.series.reduce((n, s) => n + s.values.length, 0);
    outcome = `returned ${r.series.length} series, ${points} points${r.warnings.length ? `; warnings: ${r.warnings.join(' | ')}` : ''}`;
  } catch (e) {
    outcome = `refused: ${(e as Error).message}`;
  }
  client.dispose();
  process.stdout.write(JSON.stringify({ rssMb: process.resourceUsage().maxRSS / 1024, outcome }));
}

function run(cmd: string, args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.on('data', (c: Buffer) => (out += c.toString()));
    p.stderr.on('data', (c: Buffer) => (err += c.toString()));
    p.on('error', reject);
    p.on('close', (code) => resolve({ code, out, err }));
  });
}

const NAMES: Record<Hostile, string> = {
  baseline: 'one series on the grid (baseline)',
  points: '1.4 M points for a ~1,000-point grid',
  series: '50,000 series',
};

async function clientAlone(kind: Hostile): Promise<void> {
  const server = await hostileServer(kind);
  const r = await run(process.execPath, [...process.execArgv, __filename, '--child', server.url]);
  server.close();
  if (r.code !== 0) throw new Error(`child exited ${r.code}: ${r.err}`);
  const { rssMb, outcome } = JSON.parse(r.out) as { rssMb: number; outcome: string };
  console.log(`  ${NAMES[kind]}: peak RSS ${rssMb.toFixed(0)} MB — ${outcome}`);
}

async function throughCli(kind: Hostile): Promise<void> {
  const server = await hostileServer(kind);
  const r = await run('/usr/bin/time', [
    '-f',
    'PEAK_RSS_KB %M',
    'npx',
    'tsx',
    '--tsconfig',
    'tsconfig.node.json',
    'src/main/cli/main.ts',
    'history',
    'decode.kv_ratio',
    '--since',
    '16h',
    '--prometheus',
    server.url,
    '--direct',
    '--json',
  ]);
  server.close();
  const kb = Number(/PEAK_RSS_KB (\d+)/.exec(r.err)?.[1] ?? NaN);
  let said: string;
  try {
    const out = JSON.parse(r.out) as {
      parts: { source: string; points: unknown[] }[];
      problems: { code: string; message: string }[];
    };
    const prom = out.parts.find((p) => p.source === 'prometheus');
    said = `${prom ? `${prom.points.length} points from Prometheus` : 'no Prometheus part'}${out.problems.map((p) => `; ${p.code}: ${p.message.replace(/query_range \(.*\)\): /, 'query_range (…): ')}`).join('')}`;
  } catch {
    said = r.err.trim().split('\n').slice(-2).join(' | ');
  }
  console.log(`  ${NAMES[kind]}: peak RSS ${(kb / 1024).toFixed(0)} MB (exit ${r.code}) — ${said}`);
}

async function main(): Promise<void> {
  if (process.argv[2] === '--child') return child(process.argv[3]!);
  console.log('PromHttpClient.queryRange alone, in a fresh process:');
  for (const k of ['baseline', 'points', 'series'] as const) await clientAlone(k);
  if (!existsSync('/usr/bin/time')) {
    console.log('pd-console history: skipped, /usr/bin/time is not installed (apt-get install time)');
    return;
  }
  console.log('pd-console history decode.kv_ratio --since 16h --prometheus URL --direct --json:');
  for (const k of ['baseline', 'points', 'series'] as const) await throughCli(k);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
