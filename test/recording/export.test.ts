// Exports: CSV of a time range (exact values, RFC 4180 quoting) and OpenMetrics 1.0 text with timestamps that
// promtool turns into TSDB blocks.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  RecordingWriter,
  exportCsv,
  exportOpenMetrics,
  readRecording,
  writeCsvFile,
  writeOpenMetricsFile,
  type Recording,
} from '../../src/main/core/recording';
import { SyntheticPdSession } from '../support/synthetic-pd-session';
import { exposition, header, histogram, manualClock, tempDir } from './helpers';

const run = promisify(execFile);
const PROMTOOL = ['/usr/bin/promtool', '/usr/local/bin/promtool'].find((p) => existsSync(p));

let dir: string;
let cleanup: () => Promise<void>;
let rec: Recording;
const T0 = Date.UTC(2026, 0, 5, 8);

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir());
  const path = join(dir, 'x.pdrec.jsonl.gz');
  const w = await RecordingWriter.open(path, header(), { clock: manualClock(T0) });
  for (let i = 0; i < 10; i++) {
    const ts = T0 + i * 1000 + (i % 3);
    w.appendScrape(
      ts,
      'decode',
      exposition([
        {
          name: 'sglang:token_usage',
          type: 'gauge',
          help: 'The token usage.',
          samples: [['sglang:token_usage', { engine_type: 'decode', tp_rank: '0' }, i === 4 ? NaN : i / 100]],
        },
        // Prometheus-text counter: the family carries the _total name (as SGLang writes it).
        {
          name: 'sglang:prompt_tokens_total',
          type: 'counter',
          help: 'Prompt tokens.',
          samples: [['sglang:prompt_tokens_total', { model_name: 'Qwen/Qwen3-32B' }, 1000 * i]],
        },
        // A counter family without the suffix in the text format.
        { name: 'legacy_requests', type: 'counter', samples: [['legacy_requests', {}, i]] },
        {
          name: 'sglang:e2e_request_latency_seconds',
          type: 'histogram',
          help: 'E2E "latency"\nin seconds \\ total',
          samples: histogram(
            'sglang:e2e_request_latency_seconds',
            { model_name: 'Qwen/Qwen3-32B' },
            [0.5, 1, 10],
            [i, 2 * i, 0, 1],
            1.25 * i,
          ),
        },
        {
          name: 'rpc_latency',
          type: 'summary',
          samples: [
            ['rpc_latency', { quantile: '0.5' }, 0.2],
            ['rpc_latency', { quantile: '0.99' }, i === 0 ? NaN : 1.5],
            ['rpc_latency_sum', {}, 3 * i],
            ['rpc_latency_count', {}, 2 * i],
          ],
        },
        {
          name: 'weird_labels',
          type: 'gauge',
          samples: [['weird_labels', { path: 'a"b\\c\nd', target: 'theirs' }, i === 9 ? Infinity : -i]],
        },
      ]),
    );
    w.appendScrape(
      ts + 30,
      'router',
      exposition([
        {
          name: 'smg_http_connections_active',
          type: 'gauge',
          samples: [['smg_http_connections_active', {}, 60 + i]],
        },
      ]),
    );
  }
  await w.close();
  rec = await readRecording(path);
});
afterAll(async () => {
  await cleanup();
});

/** Minimal RFC 4180 reader for the test. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let q = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (q) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') q = false;
      else cell += c;
    } else if (c === '"') q = true;
    else if (c === ',') {
      row.push(cell);
      cell = '';
    } else if (c === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
    } else cell += c;
  }
  return rows;
}

describe('CSV export', () => {
  it('writes every sample in the range with exact values', () => {
    const from = T0 + 2000;
    const to = T0 + 5002;
    const rows = parseCsv(exportCsv(rec, { fromMs: from, toMs: to }));
    expect(rows[0]).toEqual(['timestamp_ms', 'time_utc', 'target', 'metric', 'labels', 'value']);
    const body = rows.slice(1);
    for (const r of body) {
      expect(Number(r[0])).toBeGreaterThanOrEqual(from);
      expect(Number(r[0])).toBeLessThanOrEqual(to);
      expect(r[1]).toBe(new Date(Number(r[0])).toISOString());
    }
    const usage = body.filter((r) => r[3] === 'sglang:token_usage').map((r) => [Number(r[0]) - T0, r[5]]);
    expect(usage).toEqual([
      [2002, '0.02'],
      [3000, '0.03'],
      [4001, 'NaN'],
      [5002, '0.05'],
    ]);
    const weird = body.find((r) => r[3] === 'weird_labels')!;
    expect(weird[4]).toBe('path="a\\"b\\\\c\\nd",target="theirs"');
    expect(weird[2]).toBe('decode');
    // Every series × timestamp in range, nothing else.
    const expected = rec.series.reduce((a, s) => a + [...s.t].filter((t) => t >= from && t <= to).length, 0);
    expect(body.length).toBe(expected);
  });

  it('streams to a file and selects series', async () => {
    const out = join(dir, 'router.csv');
    const n = await writeCsvFile(rec, { series: (s) => s.target === 'router' }, out);
    expect(n).toBe(10);
    const rows = parseCsv(await readFile(out, 'utf8'));
    expect(rows.slice(1).map((r) => Number(r[5]))).toEqual([60, 61, 62, 63, 64, 65, 66, 67, 68, 69]);
    await expect(writeCsvFile(rec, {}, out)).rejects.toThrow(/CSV export to .* failed/);
  });
});

describe('OpenMetrics export', () => {
  it('is structurally valid OpenMetrics 1.0 with timestamps in seconds', () => {
    const text = exportOpenMetrics(rec);
    expect(text.endsWith('\n# EOF\n')).toBe(true);
    const lines = text.trimEnd().split('\n');
    const typeOf = new Map<string, string>();
    const closed = new Set<string>();
    let current = '';
    const lastTs = new Map<string, number>();
    for (const line of lines.slice(0, -1)) {
      const meta = /^# (TYPE|HELP) (\S+) (.*)$/.exec(line);
      if (meta) {
        if (meta[1] === 'TYPE') {
          expect(typeOf.has(meta[2]), `family ${meta[2]} declared twice`).toBe(false);
          typeOf.set(meta[2], meta[3]);
          if (current) closed.add(current);
          current = meta[2];
        } else expect(meta[2]).toBe(current);
        continue;
      }
      const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)\{(.*)\} (\S+) (\d+(?:\.\d{1,3})?)$/.exec(line);
      expect(m, line).not.toBeNull();
      const [, name, labels, , ts] = m!;
      // Families are contiguous: each sample belongs to the family declared last.
      expect(name.startsWith(current), `${name} outside ${current}`).toBe(true);
      expect(closed.has(current)).toBe(false);
      if (typeOf.get(current) === 'counter') expect(name).toBe(`${current}_total`);
      expect(labels).toMatch(/target="(decode|router)"/);
      const key = `${name}{${labels}}`;
      const t = Number(ts);
      expect(t).toBeGreaterThan(lastTs.get(key) ?? 0);
      lastTs.set(key, t);
    }
    expect(typeOf.get('sglang:prompt_tokens')).toBe('counter');
    expect(typeOf.get('legacy_requests')).toBe('counter');
    expect(typeOf.get('sglang:e2e_request_latency_seconds')).toBe('histogram');
    expect(typeOf.get('rpc_latency')).toBe('summary');
    expect(text).toContain(
      '# HELP sglang:e2e_request_latency_seconds E2E \\"latency\\"\\nin seconds \\\\ total\n',
    );
    expect(text).toContain('legacy_requests_total{target="decode"} 3 1767600003\n');
    expect(text).toContain(
      'sglang:token_usage{engine_type="decode",tp_rank="0",target="decode"} NaN 1767600004.001\n',
    );
    expect(text).toContain(
      'weird_labels{path="a\\"b\\\\c\\nd",exported_target="theirs",target="decode"} +Inf 1767600009\n',
    );
    // One histogram MetricPoint: buckets by le, then count and sum, all at one timestamp.
    const point = lines.filter(
      (l) => l.startsWith('sglang:e2e_request_latency_seconds') && l.endsWith(' 1767600002.002'),
    );
    expect(point).toEqual([
      'sglang:e2e_request_latency_seconds_bucket{model_name="Qwen/Qwen3-32B",target="decode",le="0.5"} 2 1767600002.002',
      'sglang:e2e_request_latency_seconds_bucket{model_name="Qwen/Qwen3-32B",target="decode",le="1"} 6 1767600002.002',
      'sglang:e2e_request_latency_seconds_bucket{model_name="Qwen/Qwen3-32B",target="decode",le="10"} 6 1767600002.002',
      'sglang:e2e_request_latency_seconds_bucket{model_name="Qwen/Qwen3-32B",target="decode",le="+Inf"} 7 1767600002.002',
      'sglang:e2e_request_latency_seconds_count{model_name="Qwen/Qwen3-32B",target="decode"} 7 1767600002.002',
      'sglang:e2e_request_latency_seconds_sum{model_name="Qwen/Qwen3-32B",target="decode"} 2.5 1767600002.002',
    ]);
  });

  it('limits the export to the time range', () => {
    const text = exportOpenMetrics(rec, { fromMs: T0 + 9000, toMs: T0 + 9030 });
    const stamps = new Set(
      text
        .split('\n')
        .filter((l) => l && !l.startsWith('#'))
        .map((l) => l.split(' ').pop()),
    );
    expect([...stamps].sort()).toEqual(['1767600009', '1767600009.03']);
  });

  it.skipIf(!PROMTOOL)(
    `is accepted by promtool tsdb create-blocks-from openmetrics${PROMTOOL ? '' : ' — SKIPPED: promtool is missing (apt-get install prometheus)'}`,
    async () => {
      // Ten realistic minutes of all three targets, the kind of file an operator would import (kept short: on
      // a loaded 2-core CI machine promtool's import of half an hour outlasted the test's 2 minutes).
      const path = join(dir, 'pd.pdrec.jsonl.gz');
      const start = Date.UTC(2026, 0, 5, 8);
      const sim = new SyntheticPdSession(start, 5, 600_000);
      const clock = manualClock(start);
      const w = await RecordingWriter.open(path, header({ startedAt: start }), { clock });
      for (let i = 0; i < 600; i++) {
        const tick = sim.step();
        clock.set(sim.now);
        for (const s of tick.scrapes) w.appendScrape(s.ts, s.target, s.exp);
      }
      await w.close();
      const pd = await readRecording(path);
      const om = join(dir, 'pd.om.txt');
      const res = await writeOpenMetricsFile(pd, {}, om);
      expect(res.skipped).toEqual([]);
      expect(res.samples).toBe(pd.series.reduce((a, s) => a + s.v.length, 0));
      const blocks = join(dir, 'blocks');
      await mkdir(blocks);
      const { stdout, stderr } = await run(
        PROMTOOL!,
        ['tsdb', 'create-blocks-from', 'openmetrics', om, blocks],
        {
          maxBuffer: 16 << 20,
        },
      ).catch((err: { stdout?: string; stderr?: string; message: string }) => {
        throw new Error(
          `promtool rejected the export: ${err.message}\n${err.stderr ?? ''}\n${err.stdout ?? ''}`,
        );
      });
      expect(`${stdout}${stderr}`).not.toMatch(/error/i);
      const made = (await readdir(blocks)).filter((d) => /^[0-9A-Z]{26}$/.test(d));
      expect(made.length).toBeGreaterThan(0);
      const meta = JSON.parse(await readFile(join(blocks, made[0], 'meta.json'), 'utf8'));
      expect(meta.stats.numSamples).toBeGreaterThan(0);
      const total = await Promise.all(
        made.map(
          async (d) =>
            JSON.parse(await readFile(join(blocks, d, 'meta.json'), 'utf8')).stats.numSamples as number,
        ),
      );
      expect(total.reduce((a, b) => a + b, 0)).toBe(res.samples);
    },
    120_000,
  );
});
