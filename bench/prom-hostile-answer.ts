// Peak memory of the Prometheus client reading answers built to hurt: a 30 MB range answer holding 1.4 M points
// for a query whose grid has 1,001, and an answer of 50,000 series. A real HTTP server in this process serves
// each body; the client runs in a fresh child process, which reports its peak RSS (getrusage maxrss) and what
// the client returned. Run alone: `npx tsx --tsconfig tsconfig.node.json bench/prom-hostile-answer.ts`.
import { spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

const START = 1_700_000_000;
const STEP = 60;
const GRID = 1000; // points asked: (end - start) / step + 1 = 1,001

/** One series holding `points` samples packed into the asked range (many per step). */
function manyPoints(points: number): Buffer {
  const parts: string[] = [];
  for (let i = 0; i < points; i++)
    parts.push(`[${(START + (i * GRID * STEP) / points).toFixed(3)},"${i % 10}"]`);
  return Buffer.from(
    `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"job":"sglang-decode"},"values":[${parts.join(',')}]}]}}`,
  );
}

/** `series` series of `points` samples each, with the labels a real scrape carries. */
function manySeries(series: number, points: number): Buffer {
  const out: string[] = [];
  for (let s = 0; s < series; s++) {
    const vals = Array.from({ length: points }, (_, i) => `[${START + i * STEP},"${s % 7}"]`).join(',');
    out.push(
      `{"metric":{"__name__":"sglang:num_running_reqs","job":"sglang-decode","instance":"10.1.${s >> 8}.${s & 255}:30000","worker":"decode-${s}","model_name":"deepseek-ai/DeepSeek-V3"},"values":[${vals}]}`,
    );
  }
  return Buffer.from(`{"status":"success","data":{"resultType":"matrix","result":[${out.join(',')}]}}`);
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
  const rssMb = process.resourceUsage().maxRSS / 1024;
  process.stdout.write(JSON.stringify({ rssMb, outcome }));
}

async function measure(name: string, body: Buffer): Promise<void> {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const self = __filename;
  const out = await new Promise<string>((resolve, reject) => {
    const p = spawn(process.execPath, [...process.execArgv, self, '--child', base], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let text = '';
    p.stdout.on('data', (c: Buffer) => (text += c.toString()));
    p.on('error', reject);
    p.on('close', (code) => (code === 0 ? resolve(text) : reject(new Error(`child exited ${code}`))));
  });
  server.close();
  const { rssMb, outcome } = JSON.parse(out) as { rssMb: number; outcome: string };
  console.log(
    `${name}: ${(body.length / 1e6).toFixed(1)} MB body, peak RSS ${rssMb.toFixed(0)} MB — ${outcome}`,
  );
}

async function main(): Promise<void> {
  if (process.argv[2] === '--child') return child(process.argv[3]!);
  await measure('baseline: one series on the 1,001-point grid', manySeries(1, GRID + 1));
  await measure('1.4 M points for a 1,001-point grid', manyPoints(1_400_000));
  await measure('50,000 series', manySeries(50_000, 20));
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
