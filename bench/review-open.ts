// Where the open of a 24 h recording goes, in Chromium (browser mode): a fresh app per run (cold core, empty
// review cache), the sessions list shown, then "Open" clicked — and once the review cache holds the file, the
// same again in a new page of the same app (the second, cached open). Every WebSocket frame of the page is
// stamped from the pointerdown, so the figures say when each request left, when its answer came and when the
// overview's charts were drawn and painted. `zcat FILE > /dev/null` is timed before each run, for the ratio of
// issue 16; the ratio is printed from the pointerdown (the page's own clock) and from Playwright's click call.
// Run: npm run build && npx tsx --tsconfig tsconfig.node.json bench/review-open.ts [runs]
// BENCH_PROFILE=file.cpuprofile also writes a V8 profile of the page's main thread, click to overview drawn;
// BENCH_TRACE=file.json a Chromium trace (style, layout, paint, scripts) of the same stretch.
import { spawn } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { allChartsReady } from './support/charts-ready';
import { syntheticRecording } from './review-fixture';

const ID = '20260105-080000Z-b24h00';

/** Page-side stamps (no CDP latency): the click, every frame sent and received, charts turning ready, long frames. */
const PAGE_MARKS = `
  window.__marks = [];
  const mark = (what) => void window.__marks.push([performance.now(), what]);
  document.addEventListener('pointerdown', () => mark('pointerdown'), true);
  document.addEventListener('click', () => mark('click'), true);
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (d) {
    const m = /"method":"(\\w+)"/.exec(String(d));
    const id = /"id":(\\d+)/.exec(String(d));
    mark('→ ' + (m ? m[1] : '?') + (id ? ' #' + id[1] : ''));
    return send.call(this, d);
  };
  const add = WebSocket.prototype.addEventListener;
  WebSocket.prototype.addEventListener = function (type, l, o) {
    if (type !== 'message') return add.call(this, type, l, o);
    return add.call(this, type, (ev) => {
      const t0 = performance.now();
      l(ev);
      // A binary frame (src/shared/wire-frame.ts) starts with the length of its JSON part, which has the id.
      const bin = ev.data instanceof ArrayBuffer;
      const d = bin ? new TextDecoder().decode(new Uint8Array(ev.data, 4, new DataView(ev.data).getUint32(0, true))) : String(ev.data);
      const size = bin ? ev.data.byteLength : d.length;
      const id = /"id":(\\d+)/.exec(d);
      const evn = /"event":"(\\w+)"/.exec(d);
      window.__marks.push([t0, '← ' + (evn ? 'event ' + evn[1] : 'answer #' + (id ? id[1] : '?')) +
        ' (' + (size / 1024).toFixed(0) + ' KiB' + (bin ? ' binary' : '') + ', handled in ' + (performance.now() - t0).toFixed(1) + ' ms)']);
    }, o);
  };
  let presented = false;
  new MutationObserver((records) => {
    for (const r of records)
      if (r.attributeName === 'data-state')
        mark(r.target.getAttribute('data-testid') + ' ' + r.target.getAttribute('data-state'));
    const charts = [...document.querySelectorAll('[data-testid^="chart-"][data-state]')];
    if (!presented && charts.length > 0 && charts.every((c) => c.getAttribute('data-state') === 'ready')) {
      presented = true;
      // The frame that shows the drawn charts: its rAF runs before it is painted, the task after it once it is.
      requestAnimationFrame(() => setTimeout(() => mark('overview presented'), 0));
    }
  }).observe(document, { subtree: true, attributes: true, attributeFilter: ['data-state'] });
  let last = performance.now();
  const frame = (t) => {
    if (t - last > 50) mark('(no frame for ' + (t - last).toFixed(0) + ' ms)');
    last = t;
    requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
`;

/** CPU time (user + system) a process has used so far, in ms, from /proc. */
async function cpuOf(pid: number): Promise<number> {
  const { readFile } = await import('node:fs/promises');
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 14 and 15 (utime, stime) in clock ticks; the list above starts at field 3.
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
}

/**
 * CPU time (ms) of every process descended from this one except `skip` — the Chromium that Playwright started
 * (browser, renderer, GPU and network processes): what the page cost, whatever the load on the machine.
 */
async function descendantsCpu(skip: number): Promise<number> {
  const { readdir, readFile } = await import('node:fs/promises');
  const parent = new Map<number, number>();
  const cpu = new Map<number, number>();
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = await readFile(`/proc/${name}/stat`, 'utf8').catch(() => '');
    if (!stat) continue;
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    parent.set(Number(name), Number(f[1]));
    cpu.set(Number(name), ((Number(f[11]) + Number(f[12])) * 1000) / 100);
  }
  let total = 0;
  for (const [pid, ms] of cpu) {
    if (pid === skip) continue;
    for (let p = parent.get(pid); p !== undefined && p > 1; p = parent.get(p))
      if (p === process.pid) {
        total += ms;
        break;
      }
  }
  return total;
}

/** CPU time of `zcat FILE > /dev/null` (user + system, ms), as bash's `time` reports it. */
function zcatCpu(path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    let out = '';
    const p = spawn('bash', ['-c', 'TIMEFORMAT="%U %S"; time zcat "$0" > /dev/null', path], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    p.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    p.on('error', reject);
    p.on('exit', () => {
      const [u, sy] = out.trim().split(/\s+/).map(Number);
      resolve((u + sy) * 1000);
    });
  });
}

function zcat(path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const p = spawn('sh', ['-c', 'zcat "$0" > /dev/null', path], { stdio: 'ignore' });
    p.on('error', reject);
    p.on('exit', (code) =>
      code === 0 ? resolve(performance.now() - t0) : reject(new Error(`zcat exited ${code}`)),
    );
  });
}

export interface OpenFigures {
  /** Node side, from Playwright's click call (includes Playwright's own round trips before the pointerdown). */
  paintMs: number;
  barMs: number;
  /** Page side: the pointerdown to the first frame painted after every overview chart turned ready. */
  pagePaintMs: number;
  pageCpuMs: number;
  coreCpuMs: number;
  /** CPU of Chromium's processes (all of them), click to the charts ready. */
  browserCpuMs: number;
  /** The core's CPU in the 1.5 s before the click (work in the background, not the open's). */
  settleCpuMs: number;
  /**
   * Page side: the pointerdown to the answer of the first screen's journal request, which waits for the full
   * detail of an open from the overview (the full read, or the cache entry): when zooms and the journal work.
   */
  fullDetailMs: number | null;
  marks: [number, string][];
}

/** Opens review `ID` from the sessions list of `url` in a fresh page; the figures of that one open. */
async function openFromList(
  browser: Awaited<ReturnType<typeof import('../e2e/support/browser').launchChromium>>,
  url: string,
  pid: number,
): Promise<OpenFigures> {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  // A string, not a function: tsx would wrap named functions in a helper the page does not have.
  await page.addInitScript(PAGE_MARKS);
  await page.goto(url);
  // A window that joins a core with a review open shows that review (the second open, after the first left
  // it open): close it for the start page, and load the page again so its marks start clean.
  const start = page.getByTestId('open-sessions');
  const shown = page.getByTestId('close-deployment');
  await start.or(shown).first().waitFor({ timeout: 60_000 });
  if (await shown.isVisible()) {
    await shown.click();
    await start.waitFor();
    await page.reload();
  }
  await start.click();
  const open = page.getByTestId(`session-open-${ID}`);
  await open.waitFor({ timeout: 120_000 });
  // The list's summary scan (first listing) is over; let the machine settle as an operator's reading would.
  const settle0 = await cpuOf(pid);
  await new Promise((r) => setTimeout(r, 1500));
  const settleCpuMs = (await cpuOf(pid)) - settle0;
  // Besides wall time (the machine is shared): the page's main-thread task time (Chromium's TaskDuration,
  // itself wall time inside tasks) and the core process's CPU (utime + stime), click to overview drawn.
  const perf = await page.context().newCDPSession(page);
  await perf.send('Performance.enable');
  const taskS = async (): Promise<number> =>
    (await perf.send('Performance.getMetrics')).metrics.find((m) => m.name === 'TaskDuration')!.value;
  const task0 = await taskS();
  const core0 = await cpuOf(pid);
  const browser0 = await descendantsCpu(pid);
  const cdp = process.env.BENCH_PROFILE ? await page.context().newCDPSession(page) : null;
  if (cdp) {
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
    await cdp.send('Profiler.start');
  }
  if (process.env.BENCH_TRACE)
    await browser.startTracing(page, {
      path: process.env.BENCH_TRACE,
      categories: [
        'devtools.timeline',
        'disabled-by-default-devtools.timeline',
        'blink.user_timing',
        'v8.execute',
      ],
    });
  const t0 = performance.now();
  await open.click();
  await page.getByTestId('review-bar').waitFor({ timeout: 300_000 });
  const barMs = performance.now() - t0;
  await allChartsReady(page);
  const paintMs = performance.now() - t0;
  const pageCpuMs = ((await taskS()) - task0) * 1000;
  const coreCpuMs = (await cpuOf(pid)) - core0;
  const browserCpuMs = (await descendantsCpu(pid)) - browser0;
  await page.waitForFunction(
    () =>
      (window as unknown as { __marks: [number, string][] }).__marks.some(
        (m) => m[1] === 'overview presented',
      ),
    undefined,
    { timeout: 30_000 },
  );
  const all = await page.evaluate(() => (window as unknown as { __marks: [number, string][] }).__marks);
  const click = all.filter((m) => m[1] === 'pointerdown').pop()![0];
  const marks = all
    .filter((m) => m[0] >= click - 1)
    .map(([at, what]): [number, string] => [at - click, what]);
  const pagePaintMs = marks.find((m) => m[1] === 'overview presented')![0];
  const fullDetailMs = await journalAnswered(page, click);
  if (process.env.BENCH_TRACE) await browser.stopTracing();
  if (cdp) {
    const { profile } = await cdp.send('Profiler.stop');
    const { writeFile } = await import('node:fs/promises');
    await writeFile(process.env.BENCH_PROFILE!, JSON.stringify(profile));
  }
  await page.getByTestId('close-deployment').click();
  await page.close();
  return {
    paintMs,
    barMs,
    pagePaintMs,
    pageCpuMs,
    coreCpuMs,
    browserCpuMs,
    settleCpuMs,
    fullDetailMs,
    marks,
  };
}

/** When (ms after `click`, page clock) the first journalAround sent after it was answered; null if never. */
async function journalAnswered(
  page: Awaited<
    ReturnType<Awaited<ReturnType<typeof import('../e2e/support/browser').launchChromium>>['newPage']>
  >,
  click: number,
): Promise<number | null> {
  const at = await page
    .waitForFunction(
      (t0) => {
        const marks = (window as unknown as { __marks: [number, string][] }).__marks;
        const sent = marks.find((m) => m[0] >= t0 && m[1].startsWith('→ journalAround #'));
        if (!sent) return false;
        const answer = `← answer #${sent[1].slice(sent[1].indexOf('#') + 1)} `;
        const got = marks.find((m) => m[0] >= sent[0] && m[1].startsWith(answer));
        return got ? got[0] - t0 : false;
      },
      click,
      { timeout: 120_000, polling: 100 },
    )
    .then((h) => h.jsonValue() as Promise<number>)
    .catch(() => null);
  return at;
}

/**
 * A fresh app (cold core, empty review cache) opens the recording at `path` never opened before; once the
 * review cache holds it, a second page opens it again (the cached open), in the same app.
 */
export async function openOnce(
  path: string,
  opts: { second?: boolean } = {},
): Promise<{ first: OpenFigures; second: OpenFigures | null }> {
  const root = join(__dirname, '..');
  const outDir = process.env.PD_E2E_OUT ?? join(root, 'out');
  if (!existsSync(join(outDir, 'main', 'web.js')))
    throw new Error(`no built app in ${outDir}: npm run build`);
  const { launchChromium } = await import('../e2e/support/browser');
  const browser = await launchChromium();
  const data = await mkdtemp(join(tmpdir(), 'pdc-review-open-'));
  await mkdir(join(data, 'recordings'), { recursive: true });
  await copyFile(path, join(data, 'recordings', `${ID}.pdrec.jsonl.gz`));
  // BENCH_CORE_ARGS: Node flags for the app's process (e.g. --trace-gc; BENCH_CORE_LOG=1 prints what it said).
  const coreArgs = (process.env.BENCH_CORE_ARGS ?? '').split(' ').filter(Boolean);
  const proc = spawn(process.execPath, [...coreArgs, join(outDir, 'main', 'web.js'), '--no-open'], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, PD_CONSOLE_DATA_DIR: data },
  });
  let log = '';
  proc.stdout!.on('data', (d: Buffer) => (log += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (log += d.toString()));
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no URL from browser mode:\n${log}`)), 30_000);
      const check = (): void => {
        const m = /(http:\/\/127\.0\.0\.1:\d+\/\?token=\S+)/.exec(log);
        if (m) {
          clearTimeout(t);
          resolve(m[1]);
        }
      };
      proc.stdout!.on('data', check);
    });
    const first = await openFromList(browser, url, proc.pid!);
    if (!opts.second) return { first, second: null };
    // The first open's full read and its cache entry happen in the background: wait for the entry.
    const cacheDir = join(data, 'cache', 'review');
    for (let i = 0; i < 300; i++) {
      const names = await readdir(cacheDir).catch(() => [] as string[]);
      if (names.some((n) => n.endsWith('.rvc'))) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    await new Promise((r) => setTimeout(r, 2000));
    if (proc.exitCode !== null)
      throw new Error(`browser mode exited (${proc.exitCode}):\n${log.slice(-3000)}`);
    if (process.env.BENCH_CORE_LOG) log += `\n--- second open (${performance.now().toFixed(0)} ms) ---\n`;
    const second = await openFromList(browser, url, proc.pid!);
    if (process.env.BENCH_CORE_LOG) console.log(log);
    return { first, second };
  } catch (err) {
    throw new Error(`${(err as Error).message}\nbrowser mode said:\n${log.slice(-3000)}`, { cause: err });
  } finally {
    await browser.close();
    proc.kill('SIGTERM');
    await rm(data, { recursive: true, force: true });
  }
}

const spread = (xs: number[], d = 2): string => {
  const s = [...xs].sort((a, b) => a - b);
  return `median ${s[Math.floor(s.length / 2)].toFixed(d)}, ${s[0].toFixed(d)}–${s[s.length - 1].toFixed(d)}`;
};

async function main(): Promise<void> {
  const runs = Number(process.argv[2]) || 3;
  const verbose = process.env.BENCH_VERBOSE !== '0';
  const path = await syntheticRecording(24);
  const r1: number[] = [];
  const r2: number[] = [];
  const n1: number[] = [];
  const n2: number[] = [];
  console.log(
    `review open, 24 h 1.3 recording: never opened, then from the review cache; load ${loadavg()[0].toFixed(1)}`,
  );
  const c1: number[] = [];
  const c2: number[] = [];
  const show = (label: string, o: OpenFigures, z: number): void => {
    console.log(
      `    ${label}: overview drawn ${o.pagePaintMs.toFixed(0)} ms from the pointerdown → ${(o.pagePaintMs / z).toFixed(2)} × zcat` +
        ` (from Playwright's click call: bar ${o.barMs.toFixed(0)} ms, charts ready ${o.paintMs.toFixed(0)} ms → ${(o.paintMs / z).toFixed(2)})` +
        `; full detail (journal answered) ${o.fullDetailMs === null ? 'never' : `${o.fullDetailMs.toFixed(0)} ms`}` +
        `; page tasks ${o.pageCpuMs.toFixed(0)} ms; CPU: core ${o.coreCpuMs.toFixed(0)} ms, Chromium ${o.browserCpuMs.toFixed(0)} ms (core in the 1.5 s before the click: ${o.settleCpuMs.toFixed(0)} ms)`,
    );
    if (verbose)
      for (const [at, what] of o.marks) console.log(`      ${at.toFixed(0).padStart(6)} ms  ${what}`);
  };
  for (let i = 0; i < runs; i++) {
    const z = await zcat(path);
    const zc = await zcatCpu(path);
    const { first, second } = await openOnce(path, { second: true });
    console.log(`  run ${i + 1}: zcat ${z.toFixed(0)} ms (CPU ${zc.toFixed(0)} ms)`);
    show('first open ', first, z);
    show('second open', second!, z);
    r1.push(first.pagePaintMs / z);
    r2.push(second!.pagePaintMs / z);
    n1.push(first.paintMs / z);
    n2.push(second!.paintMs / z);
    c1.push((first.coreCpuMs + first.browserCpuMs) / zc);
    c2.push((second!.coreCpuMs + second!.browserCpuMs) / zc);
  }
  console.log(
    `  ÷ zcat, from the pointerdown:   first open ${spread(r1)}; second open ${spread(r2)} (goal ≤ 0.25)`,
  );
  console.log(`  ÷ zcat, from the click call:    first open ${spread(n1)}; second open ${spread(n2)}`);
  console.log(
    `  CPU (core + Chromium, click to charts ready) ÷ zcat CPU: first open ${spread(c1)}; second open ${spread(c2)}`,
  );
  console.log(`  load ${loadavg()[0].toFixed(1)}`);
}

const isMain = process.argv[1] !== undefined && /bench[\\/]review-open\.ts$/.test(process.argv[1]);
if (isMain)
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
