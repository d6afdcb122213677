import { performance } from 'node:perf_hooks';
import { stat, rm } from 'node:fs/promises';
import { RecordingWriter, readRecording } from '../src/main/core/store/recording';
import { readOverview } from '../src/main/core/store/recording/overview-reader';
import { isReviewInput } from '../src/main/core/review/signal-columns';
import { SyntheticPdSession } from '../bench/recording';
const start = Date.UTC(2026,0,5,8);
async function write(path: string, overview: false | object, secs: number) {
  await rm(path, { force: true });
  const sim = new SyntheticPdSession(start, 42, secs*1000);
  const clock = { now: () => sim.now, setTimeout: (fn: () => void, ms: number) => { const h = setTimeout(fn, ms); h.unref(); return { id: 1 }; }, clearTimeout: () => undefined };
  const w = await RecordingWriter.open(path, { sessionId: 's', name: 'n', startedAt: start, host: { id: 'demo', label: 'x', kind: 'demo' }, deployment: { id: 'demo', name: 'd', services: [] }, appVersion: '0' }, { clock, overview: overview as never });
  for (let i = 0; i < secs; i++) { const t = sim.step(); for (const s of t.scrapes) w.appendScrape(s.ts, s.target, s.exp); for (const u of t.unitStates) w.appendUnitState(u.ts, u.role, u.state); for (const h of t.health) w.appendHealth(h.ts, h.role, h.health); for (const e of t.events) w.appendEvent(e); for (const j of t.journal) w.appendJournal(j); if (i % 4 === 0) await new Promise(r => setImmediate(r)); }
  await w.close();
  return (await stat(path)).size;
}
async function main() {
const secs = Number(process.argv[2] ?? 3600);
const a = await write('/tmp/p4/a11.gz', false, secs);
const b = await write('/tmp/p4/a12.gz', { series: isReviewInput }, secs);
const c = await write('/tmp/p4/a12all.gz', {}, secs);
console.log('sizes 1.1', a, '1.2 review inputs', b, (b/a-1)*100, '% ; 1.2 all', c, (c/a-1)*100, '%');
const r1 = await readRecording('/tmp/p4/a11.gz'); const r2 = await readRecording('/tmp/p4/a12.gz');
console.log('series', r1.series.length, r2.series.length, 'warn', r1.warnings, r2.warnings, r1.closedCleanly, r2.closedCleanly);
let diff = 0; for (let i = 0; i < r1.series.length; i++) { const x = r1.series[i], y = r2.series[i]; if (x.name !== y.name || x.v.length !== y.v.length) diff++; else for (let k = 0; k < x.v.length; k++) if (!Object.is(x.v[k], y.v[k]) || x.t[k] !== y.t[k]) { diff++; break; } }
console.log('diff series', diff, 'events', r1.events.length, r2.events.length, 'journal', r1.journal.length, r2.journal.length);
const t0 = performance.now(); const o = await readOverview('/tmp/p4/a12.gz'); const t1 = performance.now();
console.log('overview ms', (t1-t0).toFixed(1), o!.foundBy, o!.members, o!.bytesRead, 'series', o!.recording.series.length, 'rows', o!.recording.series[0]?.t.length, o!.recording.warnings, o!.recording.closedCleanly, o!.recording.events.length, o!.recording.unitStates.length, r2.unitStates.length);
}
if (process.argv[3] !== "again") void main();
async function again() { for (let i = 0; i < 3; i++) { const t0 = performance.now(); const o = await readOverview('/tmp/p4/a12.gz'); console.log('again', (performance.now()-t0).toFixed(1), o!.recording.series.length); } const t0 = performance.now(); await readRecording('/tmp/p4/a12.gz'); console.log('full', (performance.now()-t0).toFixed(1)); }
if (process.argv[3] === 'again') void again();
