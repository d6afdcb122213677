// Soak: browser mode (core + recorder + demo host) and the renderer in Chromium, with the demo host's clock
// running fast enough to live through a simulated day, and the dashboard's history pre-filled to 24 h so every
// bounded buffer is full from the start. Samples the backend's RSS/heap and the renderer's JS heap, prints
// them, and compares the last third of the run with the first: bounded means no steady growth.
//   npx tsx --tsconfig tsconfig.node.json bench/soak.ts [--minutes 6] [--speed 240]
import { mkdtempSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launchChromium } from '../e2e/support/browser';
import { startWebApp } from '../e2e/support/web-app';
import { BENCH_WEB_ENTRY, BENCH_WEB_ENV } from './support/bench-client';

interface Sample {
  minute: number;
  rssMB: number;
  heapMB: number;
  rendererHeapMB: number;
  recordingMB: number;
}

const mb = (b: number): number => Math.round((b / 1024 / 1024) * 10) / 10;

export async function runSoak(opts: { minutes?: number; speed?: number } = {}): Promise<Sample[]> {
  const minutes = opts.minutes ?? 6;
  const speed = opts.speed ?? 240;
  const data = mkdtempSync(join(tmpdir(), 'pdc-soak-'));
  const memlog = join(data, 'mem.jsonl');
  const app = await startWebApp(
    ['--demo-speed', String(speed)],
    { ...BENCH_WEB_ENV, PD_CONSOLE_DATA_DIR: data, BENCH_MEMLOG: memlog, BENCH_HISTORY_HOURS: '24' },
    BENCH_WEB_ENTRY,
  );
  const browser = await launchChromium();
  const samples: Sample[] = [];
  try {
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    await page.goto(app.url);
    await page.getByTestId('service-card-decode').waitFor({ timeout: 60_000 });
    const cdp = await page.context().newCDPSession(page);
    const started = Date.now();
    const pages = ['o', 'k', 'm', 'o'];
    for (let i = 0; Date.now() - started < minutes * 60_000; i++) {
      await page.waitForTimeout(10_000);
      // Move between pages now and then, as an operator would; charts are created and destroyed.
      if (i % 3 === 0) await page.keyboard.press(pages[(i / 3) % pages.length]);
      await cdp.send('HeapProfiler.collectGarbage');
      const heap = (await cdp.send('Runtime.getHeapUsage')) as { usedSize: number };
      const lines = readFileSync(memlog, 'utf8').trim().split('\n');
      const last = JSON.parse(lines[lines.length - 1]) as { rss: number; heapUsed: number };
      const recDir = join(data, 'recordings');
      const recBytes = readdirSync(recDir)
        .filter((f) => f.endsWith('.gz'))
        .reduce((s, f) => s + statSync(join(recDir, f)).size, 0);
      const s: Sample = {
        minute: Math.round(((Date.now() - started) / 60_000) * 10) / 10,
        rssMB: mb(last.rss),
        heapMB: mb(last.heapUsed),
        rendererHeapMB: mb(heap.usedSize),
        recordingMB: mb(recBytes),
      };
      samples.push(s);
      process.stdout.write(
        `t=${s.minute.toFixed(1)} min (sim ${((s.minute * speed) / 60).toFixed(1)} h)  backend RSS ${s.rssMB} MB, heap ${s.heapMB} MB  renderer heap ${s.rendererHeapMB} MB  recording ${s.recordingMB} MB\n`,
      );
    }
  } finally {
    await browser.close();
    await app.stop();
  }
  const third = Math.max(1, Math.floor(samples.length / 3));
  const avg = (xs: Sample[], k: keyof Sample): number => xs.reduce((a, x) => a + x[k], 0) / xs.length;
  // The first third includes warm-up (JIT, the recording's first flushes, the demo host's catch-up);
  // steady state is the middle third against the last.
  for (const k of ['rssMB', 'heapMB', 'rendererHeapMB'] as const) {
    const first = avg(samples.slice(0, third), k);
    const middle = avg(samples.slice(third, 2 * third), k);
    const lastThird = avg(samples.slice(-third), k);
    process.stdout.write(
      `${k}: first third ${first.toFixed(1)} MB, middle ${middle.toFixed(1)} MB, last ${lastThird.toFixed(1)} MB; middle → last ${(((lastThird - middle) / middle) * 100).toFixed(1)} %\n`,
    );
  }
  return samples;
}

if (process.argv[1]?.endsWith('soak.ts')) {
  const arg = (name: string): number | undefined => {
    const i = process.argv.indexOf(name);
    return i > 0 ? Number(process.argv[i + 1]) : undefined;
  };
  void runSoak({ minutes: arg('--minutes'), speed: arg('--speed') }).then(() => process.exit(0));
}
