// A one-host 1P1D recording made before every service carried an id, as that code wrote it: services without ids,
// the servers' targets and sources named by role (`decode`), the GPUs `gpu`, the monitor's rows labelled `{role}`
// only, no `fleet` in the header — in format 1.3, and in 1.4 (the same records under the current minor). The
// screens ask for each worker's keys (`decode.kv_ratio@decode-0`, the worker and KV pages) and the host's GPU keys
// (`gpu.0.util@<host>`). Review reads such a file as the app names a 1P1D host today (a fleet of one), so it answers
// them all; it is read the slow way, by its data, until `recording resave` names its services and records in the
// file, which the sessions list and review say in one line.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { RecordingWriter, readRecording, type Recording } from '../../src/main/core/recording';
import { loadReview } from '../../src/main/core/review/load-review';
import { REVIEW_OVERVIEW } from '../../src/main/core/review/overview-table';
import { OLD_FORMAT_NOTE, FORMAT_MINOR_VERSION } from '../../src/main/core/recording/format';
import { resaveRecording } from '../../src/main/core/recording/resave';
import { SessionStore } from '../../src/main/core/recording/session-store';
import { gpuExposition, MONITOR_TARGET } from '../../src/main/core/recording/host-series';
import { runCli } from '../../src/main/cli/main';
import type { DeploymentConfig } from '../../src/shared/domain';
import { SyntheticPdSession } from '../support/synthetic-pd-session';
import { asOlderMinor, exposition, manualClock, tempDir } from './helpers';

const START = Date.UTC(2026, 0, 5, 8);
const SECONDS = 12 * 60;
const HOST = 'gpu-host-01';

/** The services as the one-host discovery of that code gave them: no ids. */
const OLD_DEPLOYMENT: DeploymentConfig = {
  id: `${HOST}-pd`,
  name: `PD on ${HOST}`,
  services: (['prefill', 'decode', 'router'] as const).map((role, i) => ({
    role,
    hostId: HOST,
    unit: `sglang-${role}.service`,
    apiUrl: `http://127.0.0.1:${30000 + i}`,
    ...(role === 'router' ? {} : { gpus: role === 'prefill' ? [0, 1] : [2, 3] }),
  })),
};

/** The keys the worker page and the KV page ask of each worker, and the GPU tables of the host. */
const WORKER_KEYS = [
  'prefill.running@prefill-0',
  'prefill.queued@prefill-0',
  'prefill.kv_ratio@prefill-0',
  'prefill.active@prefill-0',
  'prefill.health_ok@prefill-0',
  'decode.running@decode-0',
  'decode.queued@decode-0',
  'decode.kv_ratio@decode-0',
  'decode.active@decode-0',
  'decode.health_ok@decode-0',
  'router.router_requests_per_s@router',
  'router.active@router',
];
const GPU_KEYS = ['gpu.0.util@gpu-host-01', 'gpu.3.mem_used@gpu-host-01', 'gpu.2.temp@gpu-host-01'];

let dir: string;
let cleanup: () => Promise<void>;
/** Written with the 1P1D records of that code under the current minor, with its overview. */
let old14: string;
/** The same without an overview, as format 1.3. */
let old13: string;
let before: Recording;

/** One session as the recorder wrote a 1P1D host's before its services had ids. */
async function writeOld(path: string, overview: boolean): Promise<void> {
  const sim = new SyntheticPdSession(START, 7, SECONDS * 1000);
  const clock = manualClock(START);
  const w = await RecordingWriter.open(
    path,
    {
      sessionId: 'old-1p1d',
      name: 'old 1P1D session',
      startedAt: START,
      host: { id: HOST, label: HOST, kind: 'ssh', hostname: '10.0.0.5' },
      deployment: OLD_DEPLOYMENT,
      appVersion: '0.1.0',
    },
    { clock, overview: overview && REVIEW_OVERVIEW },
  );
  for (let i = 0; i < SECONDS; i++) {
    const tick = sim.step();
    clock.set(sim.now);
    const scraped = new Set<string>(tick.scrapes.map((s) => s.target));
    // The monitor's poll: each role's scrape health, labelled by role only.
    w.appendScrape(
      sim.now,
      MONITOR_TARGET,
      exposition([
        {
          name: 'up',
          type: 'gauge',
          samples: (['prefill', 'decode', 'router'] as const).map((role) => [
            'up',
            { role },
            scraped.has(role) ? 1 : 0,
          ]),
        },
      ]),
    );
    for (const s of tick.scrapes) w.appendScrape(s.ts, s.target, s.exp);
    if (i % 5 === 0)
      w.appendScrape(
        sim.now + 100,
        'gpu',
        gpuExposition(
          [0, 1, 2, 3].map((index) => ({
            index,
            utilPct: (i + index * 7) % 100,
            memUsedMiB: 40_000 + index,
            memTotalMiB: 81_920,
            tempC: 50 + index,
            powerW: 300 + (i % 50),
          })),
        ),
      );
    for (const u of tick.unitStates) w.appendUnitState(u.ts, u.role, u.state);
    for (const h of tick.health) w.appendHealth(h.ts, h.role, h.health);
    for (const e of tick.events) w.appendEvent(e);
    for (const j of tick.journal) w.appendJournal(j);
  }
  await w.close();
}

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir());
  old14 = join(dir, 'old14.pdrec.jsonl.gz');
  old13 = join(dir, 'old13.pdrec.jsonl.gz');
  await writeOld(old14, true);
  await writeOld(old13, false);
  await asOlderMinor(old13, 3);
  before = await readRecording(old14);
}, 120_000);

afterAll(() => cleanup());

/** The keys of `wanted` a review's table has no value for at any row. */
function unanswered(table: { groups: Map<string, { cols: Map<string, Float32Array> }> }, wanted: string[]) {
  const has = new Set<string>();
  for (const g of table.groups.values()) for (const [k, c] of g.cols) if (c.some((x) => x === x)) has.add(k);
  return wanted.filter((k) => !has.has(k));
}

describe('a 1P1D recording made before its services had ids', () => {
  it('is said to be of an older format, in 1.4 as in 1.3, and its review answers every worker and host key', async () => {
    const folder = join(dir, 'sessions');
    await mkdir(folder);
    await copyFile(old14, join(folder, '20260105-080000Z-aaaaaa.pdrec.jsonl.gz'));
    await copyFile(old13, join(folder, '20260105-090000Z-bbbbbb.pdrec.jsonl.gz'));
    const listed = await new SessionStore(folder).list();
    expect(listed).toHaveLength(2);
    for (const s of listed) expect(s.warnings, s.id).toEqual([OLD_FORMAT_NOTE]);
    for (const p of [old14, old13]) {
      const review = await loadReview(p);
      // Read by its data (the overview of a file named by role is not today's), with the one-line note.
      expect(review.loadedFrom).toBe('recording');
      expect(review.data.warnings).toEqual([OLD_FORMAT_NOTE]);
      // The role aggregates are there, and what the worker, KV and GPU pages ask for.
      expect(unanswered(review.data.table, ['decode.kv_ratio', 'prefill.running'])).toEqual([]);
      expect(unanswered(review.data.table, [...WORKER_KEYS, ...GPU_KEYS])).toEqual([]);
      expect(review.data.header.deployment.services.map((s) => s.id)).toEqual([
        'prefill-0',
        'decode-0',
        'router',
      ]);
    }
  });

  it('re-saved, names its services and records as the app does today, and the worker, KV and GPU pages find their keys', async () => {
    const p = join(dir, 'resaved.pdrec.jsonl.gz');
    await copyFile(old14, p);
    const old = await loadReview(p);
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(['recording', 'resave', p], {
      stdout: (s) => out.push(s),
      stderr: (s) => err.push(s),
      readStdin: async () => '',
    });
    expect(err.join('')).toBe('');
    expect(code).toBe(0);
    expect(out.join('')).toMatch(
      /re-saved from format 1\.4 to 1\.4 \(.+; its services named prefill-0, decode-0, router, as the app names them now\)/,
    );
    const after = await readRecording(p);
    expect(after.header.minorVersion).toBe(FORMAT_MINOR_VERSION);
    expect(after.header.deployment.services.map((s) => [s.role, s.id, s.hostId])).toEqual([
      ['prefill', 'prefill-0', HOST],
      ['decode', 'decode-0', HOST],
      ['router', 'router', HOST],
    ]);
    expect(after.header.fleet?.hosts).toEqual([{ id: HOST, label: HOST, kind: 'ssh', hostname: '10.0.0.5' }]);
    expect(after.header.fleet?.fleet.workers.map((w) => [w.role, w.host])).toEqual([
      ['prefill', HOST],
      ['decode', HOST],
    ]);

    // Nothing recorded is lost: every series, value, state, health result, event and journal line, renamed.
    const renamed: Record<string, string> = {
      prefill: 'prefill@prefill-0',
      decode: 'decode@decode-0',
      router: 'router@router',
      gpu: `gpu@${HOST}`,
      monitor: 'monitor',
    };
    const key = (target: string, name: string, labels: Record<string, string>) =>
      `${target}|${name}|${JSON.stringify(Object.entries(labels).sort())}`;
    const workerOf: Record<string, string> = { prefill: 'prefill-0', decode: 'decode-0', router: 'router' };
    const expected = new Map(
      before.series.map((s) => [
        key(
          renamed[s.target],
          s.name,
          s.target === 'monitor' ? { ...s.labels, worker: workerOf[s.labels.role] } : s.labels,
        ),
        s,
      ]),
    );
    expect(after.series.length).toBe(before.series.length);
    for (const s of after.series) {
      const was = expected.get(key(s.target, s.name, s.labels));
      expect(was, `${s.target} ${s.name}`).toBeDefined();
      expect(Array.from(s.t)).toEqual(Array.from(was!.t));
      expect(Array.from(s.v)).toEqual(Array.from(was!.v));
    }
    expect(after.stats.samples).toBe(before.stats.samples);
    expect(after.unitStates).toEqual(before.unitStates.map((u) => ({ ...u, source: renamed[u.source] })));
    expect(after.health).toEqual(before.health.map((h) => ({ ...h, source: renamed[h.source] })));
    expect(after.journal).toEqual(before.journal.map((j) => ({ ...j, role: renamed[j.role] })));
    expect(after.events).toEqual(before.events);

    // The list no longer offers a re-save; review opens it from its overview and answers every key asked.
    const store = new SessionStore(dir);
    expect((await store.info('resaved')).warnings).toEqual([]);
    const review = await loadReview(p, { fullDelayMs: 0 });
    expect(review.loadedFrom).toBe('overview');
    expect(review.data.warnings).toEqual([]);
    expect(unanswered(review.data.table, [...WORKER_KEYS, ...GPU_KEYS])).toEqual([]);
    await review.full;
    expect(review.detail).toBe('full');
    const table = review.data.table;
    expect(unanswered(table, [...WORKER_KEYS, ...GPU_KEYS, 'decode.kv_ratio', 'prefill.running'])).toEqual(
      [],
    );
    // The review of the re-saved file is the old file's review, group for group and row for row: each worker's,
    // each role's aggregate and the host's GPUs.
    const groups = [
      'prefill@prefill-0',
      'decode@decode-0',
      'router@router',
      `gpu@${HOST}`,
      'prefill',
      'decode',
      'router',
    ];
    expect([...table.groups.keys()].sort()).toEqual([...old.data.table.groups.keys()].sort());
    expect([...table.groups.keys()].sort()).toEqual([...groups].sort());
    for (const group of groups) {
      const was = old.data.table.groups.get(group)!;
      const is = table.groups.get(group)!;
      expect(is, group).toBeDefined();
      expect(Array.from(is.t), group).toEqual(Array.from(was.t));
      expect([...is.cols.keys()].sort()).toEqual([...was.cols.keys()].sort());
      for (const [k, col] of was.cols) {
        const c = is.cols.get(k)!;
        for (let i = 0; i < col.length; i++)
          if (!Object.is(c[i], col[i])) throw new Error(`${k}[${i}]: ${c[i]}, was ${col[i]}`);
      }
    }
    // The role's aggregate of its one worker is that worker at every poll that scraped it.
    const polls = table.groups.get('decode')!.t;
    let compared = 0;
    for (const t of polls) {
      const role = table.value('decode.kv_ratio', t);
      const worker = table.value('decode.kv_ratio@decode-0', t);
      if (role === null || worker === null) continue;
      expect(role).toBeCloseTo(worker, 6);
      compared++;
    }
    expect(compared).toBeGreaterThan(SECONDS / 2);
  }, 180_000);

  it('re-saved from 1.3, answers the same keys', async () => {
    const p = join(dir, 'resaved13.pdrec.jsonl.gz');
    await copyFile(old13, p);
    const r = await resaveRecording(p, { overview: REVIEW_OVERVIEW });
    expect([r.fromMinorVersion, r.named]).toEqual([3, ['prefill-0', 'decode-0', 'router']]);
    const review = await loadReview(p, { fullDelayMs: 0 });
    expect(review.loadedFrom).toBe('overview');
    await review.full;
    expect(unanswered(review.data.table, [...WORKER_KEYS, ...GPU_KEYS])).toEqual([]);
    // Re-saving it again changes nothing more: its services are named.
    const again = await resaveRecording(p, { overview: REVIEW_OVERVIEW });
    expect(again.named).toBeNull();
  }, 180_000);
});
