// docs/recording-format.md promises the format can be read without PD Console and gives a Python reader written
// from the spec alone. This runs that very code (extracted from the document) against a recording and compares
// every value with the app's reader.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FORMAT_MINOR_VERSION } from '../../src/main/core/recording/format';
import { execFile, execFileSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import {
  RecordingWriter,
  readHeader,
  readRecording,
  type RecordedSeries,
} from '../../src/main/core/recording';
import {
  REVIEW_OVERVIEW,
  tableReviewData,
  type TableRecord,
} from '../../src/main/core/review/overview-table';
import { readOverview } from '../../src/main/core/recording/overview-reader';
import { SyntheticPdSession } from '../support/synthetic-pd-session';
import { exposition, header, manualClock, ONE_HOST, oneHostHeader, tempDir } from './helpers';

const run = promisify(execFile);
const DOC = resolve(__dirname, '../../docs/recording-format.md');
const PYTHON = ['python3', 'python'].find((p) => {
  try {
    return /Python 3/.test(
      execFileSync(p, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }),
    );
  } catch {
    return false;
  }
});

let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ({ dir, cleanup } = await tempDir());
});
afterAll(async () => {
  await cleanup();
});

describe('the Python reference decoder in docs/recording-format.md', () => {
  it.skipIf(!PYTHON)(
    `decodes a recording to exactly the app's values${PYTHON ? '' : ' — SKIPPED: no python3 on this machine'}`,
    async () => {
      const doc = await readFile(DOC, 'utf8');
      const m = /<!-- reference-decoder -->\s*```python\n([\s\S]*?)```\s*<!-- \/reference-decoder -->/.exec(
        doc,
      );
      expect(m, 'reference decoder block in the doc').not.toBeNull();
      const script = join(dir, 'decode.py');
      await writeFile(script, m![1]);

      const path = join(dir, 'r.pdrec.jsonl.gz');
      const start = Date.UTC(2026, 0, 5, 8);
      const sim = new SyntheticPdSession(start, 9, 300_000);
      const clock = manualClock(start);
      const w = await RecordingWriter.open(path, header({ startedAt: start }), { clock });
      for (let i = 0; i < 300; i++) {
        const tick = sim.step();
        clock.set(sim.now);
        for (const s of tick.scrapes) w.appendScrape(s.ts, s.target, s.exp);
        const special = [NaN, Infinity, -Infinity, -0, 1e21, 5e-324, i / 3, 2 ** 53 - i][i % 8];
        w.appendScrape(
          start + i * 1000 + 999,
          'odd',
          exposition([{ name: 'odd', type: 'gauge', samples: [['odd', {}, special]] }]),
        );
      }
      await w.close();

      // A file without an overview: the full stream, every odd value exactly.
      expect((await readHeader(path)).minorVersion).toBe(FORMAT_MINOR_VERSION);
      const rec = await readRecording(path);
      await expectPythonReads([script, path], rec.series);

      // With the overview the app writes: the full stream, and the signal rows of the overview.
      const path13 = join(dir, 'r13.pdrec.jsonl.gz');
      const sim13 = new SyntheticPdSession(start, 9, 900_000);
      const clock13 = manualClock(start);
      const w13 = await RecordingWriter.open(path13, oneHostHeader({ startedAt: start }), {
        clock: clock13,
        overview: REVIEW_OVERVIEW,
      });
      const { source } = ONE_HOST;
      for (let i = 0; i < 900; i++) {
        const tick = sim13.step();
        clock13.set(sim13.now);
        for (const s of tick.scrapes) w13.appendScrape(s.ts, source(s.target), s.exp);
        for (const u of tick.unitStates) w13.appendUnitState(u.ts, source(u.role), u.state);
        for (const h of tick.health) w13.appendHealth(h.ts, source(h.role), h.health);
      }
      await w13.close();
      expect((await readHeader(path13)).minorVersion).toBe(FORMAT_MINOR_VERSION);
      await expectPythonReads([script, path13], (await readRecording(path13)).series);
      const ov13 = (await readOverview(path13))!;
      const table = tableReviewData(ov13.recording, ov13.tables as TableRecord[]).table;
      const { stdout } = await run(PYTHON!, [script, '--signals', path13], { maxBuffer: 256 << 20 });
      let keys = 0;
      for (const line of stdout.trim().split('\n')) {
        const [group, key, t, v] = JSON.parse(line) as [string, string, number[], (number | 'nan')[]];
        const g = table.groups.get(group)!;
        const col = g.cols.get(key)!;
        expect(col, key).toBeDefined();
        expect(t).toEqual([...g.t]);
        for (let i = 0; i < t.length; i++)
          expect(v[i], `${key} at ${t[i]}`).toBe(Number.isNaN(col[i]) ? 'nan' : col[i]);
        keys++;
      }
      let appKeys = 0;
      for (const g of table.groups.values()) appKeys += g.cols.size;
      expect(keys).toBe(appKeys);
      expect(keys).toBeGreaterThan(50);
    },
    180_000,
  );
});

async function expectPythonReads(args: string[], series: RecordedSeries[]): Promise<void> {
  const { stdout } = await run(PYTHON!, args, { maxBuffer: 256 << 20 });
  const py = new Map<string, { t: number[]; v: (number | string)[] }>();
  for (const line of stdout.trim().split('\n')) {
    const [target, name, labels, t, v] = JSON.parse(line) as [
      string,
      string,
      Record<string, string>,
      number[],
      (number | string)[],
    ];
    py.set(`${target}|${name}|${JSON.stringify(labels)}`, { t, v });
  }
  expect(py.size).toBe(series.length);
  const asPython = (x: number): number | string =>
    x !== x ? 'nan' : x === Infinity ? 'inf' : x === -Infinity ? '-inf' : x;
  for (const s of series) {
    const p = py.get(`${s.target}|${s.name}|${JSON.stringify(s.labels)}`);
    expect(p, s.name).toBeDefined();
    expect(p!.t).toEqual([...s.t]);
    for (let i = 0; i < s.v.length; i++)
      if (!Object.is(p!.v[i], asPython(s.v[i])))
        throw new Error(`${s.target} ${s.name}[${i}]: python ${p!.v[i]}, app ${s.v[i]}`);
  }
}
