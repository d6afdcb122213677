// Re-saving a recording in the current format (format.ts): every value, state, event and journal line is read
// from the file and written again by the RecordingWriter, so the new file carries the overview a review opens from
// at once. A one-host file whose services are named by role gets the names the app gives that deployment now
// (fleet-of-one.ts), so review shows its workers as it shows today's. Values are exact (the writer's codec is); the
// new file replaces the old one atomically. A file whose data is not complete (cut short, damaged) is refused: the
// re-saved file would look whole and hide what was lost. One whose damage is only in its overview or index (which
// the data does not need) is re-saved: they are rebuilt.
import { rename, rm, stat } from 'node:fs/promises';
import { systemClock, type Clock } from '../clock';
import type { MetricFamily, MetricType, Sample } from '../probes/exposition/types';
import { readRecording } from './reader';
import { derivedWarning } from './derived-damage';
import { RecordingWriter, type WriterOptions } from './writer';
import { fleetOfOne, renameRecording } from './fleet-of-one';
import type { DerivedDamage, RecordedSeries, Recording } from './types';

export interface ResaveResult {
  path: string;
  /** The minor version the file had; it now has FORMAT_MINOR_VERSION. */
  fromMinorVersion: number;
  bytesBefore: number;
  bytesAfter: number;
  scrapes: number;
  /** The damaged or missing overview and index parts that the new file has rebuilt. */
  rebuilt: DerivedDamage[];
  /** The ids its services were given (a file that named them by role), or null. */
  named: string[] | null;
}

/** Rewrites `path` in the current format. `overview` as for RecordingWriter (the app keeps review's series). */
export async function resaveRecording(
  path: string,
  opts: { overview?: WriterOptions['overview'] } = {},
): Promise<ResaveResult> {
  const bytesBefore = (await stat(path)).size;
  const rec = await readRecording(path);
  const derived = derivedWarning(rec.derivedDamage, true);
  const lost = rec.warnings.filter((w) => w !== derived);
  if (!rec.closedCleanly || lost.length)
    throw new Error(
      `${path} is not re-saved: ${lost.join(' ') || 'it was not closed properly'} A re-saved copy would look complete and hide that; open it as it is.`,
    );
  const naming = fleetOfOne(rec.header);
  if (naming) renameRecording(rec, naming);
  const tmp = `${path}.resave-${process.pid}.part`;
  let scrapes: number;
  try {
    scrapes = await writeAgain(rec, tmp, opts.overview);
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  return {
    path,
    fromMinorVersion: rec.header.minorVersion,
    bytesBefore,
    bytesAfter: (await stat(path)).size,
    scrapes,
    rebuilt: rec.derivedDamage,
    named: naming?.ids ?? null,
  };
}

/** One entry per record of the recording, merged in time order. */
type Item =
  | { ts: number; kind: 'scrape'; target: string; row: number }
  | { ts: number; kind: 'other'; write: (w: RecordingWriter) => void };

async function writeAgain(rec: Recording, out: string, overview: WriterOptions['overview']): Promise<number> {
  let now = rec.header.startedAt;
  // The flush cadence follows recorded time, as in the session itself.
  const clock: Clock = {
    now: () => now,
    // Real timers the writer can clear: one left to fire while the file is closed wrote after its end.
    setTimeout: (fn, ms) => systemClock.setTimeout(fn, ms),
    clearTimeout: (timer) => systemClock.clearTimeout(timer),
  };
  const { sessionId, name, startedAt, host, deployment, appVersion, flushIntervalMs, fleet } = rec.header;
  const w = await RecordingWriter.open(
    out,
    { sessionId, name, startedAt, host, deployment, appVersion, ...(fleet ? { fleet } : {}) },
    { clock, flushIntervalMs, ...(overview !== undefined ? { overview } : {}) },
  );
  const targets = scrapeRows(rec.series);
  const items: Item[] = [];
  for (const [target, t] of targets)
    for (let row = 0; row < t.times.length; row++)
      items.push({ ts: t.times[row], kind: 'scrape', target, row });
  for (const u of rec.unitStates)
    items.push({ ts: u.ts, kind: 'other', write: (x) => x.appendUnitState(u.ts, u.source, u.state) });
  for (const h of rec.health)
    items.push({ ts: h.ts, kind: 'other', write: (x) => x.appendHealth(h.ts, h.source, h.health) });
  for (const e of rec.events) items.push({ ts: e.ts, kind: 'other', write: (x) => x.appendEvent(e) });
  for (const j of rec.journal) items.push({ ts: j.ts, kind: 'other', write: (x) => x.appendJournal(j) });
  // Stable: records of one time keep the order the reader returned them in.
  items.sort((a, b) => a.ts - b.ts);
  let i = 0;
  for (const it of items) {
    now = it.ts;
    if (it.kind === 'scrape') {
      const t = targets.get(it.target) as TargetRows;
      w.appendScrape(it.ts, it.target, { format: 'prometheus', ...t.exposition(it.row) });
    } else it.write(w);
    if (++i % 2048 === 0) {
      await new Promise((r) => setImmediate(r));
      while (w.stats.queuedBytes > 8 << 20) await new Promise((r) => setTimeout(r, 5));
      if (w.error) throw w.error;
    }
  }
  await w.close();
  if (w.error) throw w.error;
  return w.stats.scrapes;
}

interface TargetRows {
  times: Float64Array;
  exposition(row: number): { families: MetricFamily[]; sampleCount: number };
}

/** Per target: the time of every recorded scrape and the exposition it held, rebuilt from the columns. */
function scrapeRows(series: readonly RecordedSeries[]): Map<string, TargetRows> {
  const byTarget = new Map<string, RecordedSeries[]>();
  for (const s of series) {
    const list = byTarget.get(s.target);
    if (list) list.push(s);
    else byTarget.set(s.target, [s]);
  }
  const out = new Map<string, TargetRows>();
  for (const [target, list] of byTarget) {
    // Series in order of first appearance (their ids), as the scrapes listed them.
    list.sort((a, b) => a.id - b.id);
    const all = new Set<number>();
    for (const s of list) for (const x of s.t) all.add(x);
    const times = Float64Array.from(all).sort();
    const next = new Int32Array(list.length);
    const families: { name: string; type: MetricType; help?: string; unit?: string }[] = [];
    const famOf = new Int32Array(list.length);
    const famIndex = new Map<string, number>();
    list.forEach((s, k) => {
      let f = famIndex.get(s.family);
      if (f === undefined) {
        f = families.length;
        famIndex.set(s.family, f);
        families.push({ name: s.family, type: s.type, help: s.help, unit: s.unit });
      }
      famOf[k] = f;
    });
    let expected = 0;
    out.set(target, {
      times,
      exposition(row) {
        // Rows are asked for in order: each series' pointer only moves forward.
        if (row !== expected) throw new Error(`rows of ${target} out of order`);
        expected++;
        const t = times[row];
        const samples: Sample[][] = families.map(() => []);
        let n = 0;
        for (let k = 0; k < list.length; k++) {
          const s = list[k];
          const j = next[k];
          if (j < s.t.length && s.t[j] === t) {
            samples[famOf[k]].push({ name: s.name, labels: s.labels, value: s.v[j] });
            next[k] = j + 1;
            n++;
          }
        }
        const fams: MetricFamily[] = [];
        families.forEach((f, i) => {
          if (samples[i].length) fams.push({ ...f, samples: samples[i] });
        });
        return { families: fams, sampleCount: n };
      },
    });
  }
  return out;
}
