// Review mode through the app's own handler map (the one IPC and the WebSocket dispatch into): a recorded
// session opens as a read-only deployment whose charts, cursor state, markers and journal come from the file.
import { copyFile, mkdtemp, readdir, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createApp, type App } from '../../src/main/compose';
import type { ApiEvents, ReviewOpenResult, SeriesQuery } from '../../src/shared/contract';
import { writeSession, type WrittenSession } from './helpers';
import { scanMarked } from '../../src/main/core/recording/members';
import { OLD_FORMAT_NOTE } from '../../src/shared/api/review';

let app: App | undefined;
let dataDir: string;
let session: WrittenSession;

async function freshApp(): Promise<App> {
  await app?.shutdown();
  app = createApp({ shell: 'browser', dataDir, record: false });
  return app;
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'pdc-review-svc-'));
  session = await writeSession(join(dataDir, 'recordings'), 6);
}, 60_000);

afterEach(async () => {
  await app?.shutdown();
  app = undefined;
});

function capture<E extends keyof ApiEvents>(a: App, name: E): ApiEvents[E][] {
  const got: ApiEvents[E][] = [];
  a.core.on(name, ((p: ApiEvents[E]) => got.push(p)) as never);
  return got;
}

describe('review service', () => {
  let opened: ReviewOpenResult;

  it('opens a recorded session as a read-only deployment with its events as markers', async () => {
    const a = await freshApp();
    const listed = await a.handlers.listSessions({});
    expect(listed.map((s) => s.id)).toContain(session.id);
    opened = await a.handlers.openSessionReview({ id: session.id });
    const { summary, events } = opened;
    expect(summary.deployment.id).toBe(`rec:${session.id}`);
    expect(summary.deployment.services.map((s) => s.role)).toEqual(['prefill', 'decode', 'router']);
    expect(summary.host.kind).toBe('ssh');
    expect(summary.review).toMatchObject({
      sessionId: session.id,
      closedCleanly: true,
      // Format 1.2: the first screen comes from the recording's overview.
      loadedFrom: 'overview',
      warnings: [],
    });
    // It opens at the last recorded scrape.
    expect(summary.review!.cursor).toBeLessThanOrEqual(summary.review!.lastTs);
    expect(summary.review!.lastTs - summary.review!.cursor).toBeLessThan(1500);
    expect(summary.review!.lastTs).toBeGreaterThanOrEqual(session.lastTs - 1000);
    const alert = events.find((e) => e.kind === 'alert');
    expect(alert?.ts).toBe(session.crashAt);
    expect(events.some((e) => e.kind === 'restart-step')).toBe(true);
    expect(events.every((e) => e.deploymentId === summary.deployment.id)).toBe(true);
    // What the first screen would ask for next comes with the open, as those requests answer it.
    const id = summary.deployment.id;
    expect(opened.first.catalog).toEqual(await a.handlers.getSignalCatalog({ deploymentId: id }));
    expect(opened.first.catalog.some((c) => c.key === 'decode.kv_ratio')).toBe(true);
    expect(opened.first.dashboard).toEqual(await a.handlers.getDashboard({ deploymentId: id }));
    expect(opened.first.dashboard.deploymentId).toBe(id);
    // The recent list is written after the answer; a listing right after it still has the session.
    const recent = await a.handlers.listRecentReviews({});
    expect(recent[0]).toMatchObject({ key: session.id, sessionId: session.id });
    const deployments = await a.handlers.listDeployments({});
    expect(deployments.map((d) => d.deployment.id)).toContain(summary.deployment.id);
    // Opening again joins the open review instead of reading the file twice.
    const again = await a.handlers.openSessionReview({ id: session.id });
    expect(again.summary.deployment.id).toBe(summary.deployment.id);
  });

  it('builds the validators of the first screen requests after start, from samples they accept', async () => {
    const warned: string[] = [];
    const spy = vi.spyOn(console, 'warn').mockImplementation((m: unknown) => void warned.push(String(m)));
    try {
      await freshApp();
      await new Promise((r) => setTimeout(r, 20));
    } finally {
      spy.mockRestore();
    }
    expect(warned.filter((w) => w.includes('warm-up'))).toEqual([]);
  });

  it('opened from the overview, a zoomed-in chart still gets every recorded scrape', async () => {
    const a = await freshApp();
    const { summary } = await a.handlers.openSessionReview({ id: session.id });
    expect(summary.review!.loadedFrom).toBe('overview');
    const id = summary.deployment.id;
    const from = summary.review!.firstTs + 60_000;
    // Two minutes at 1 s scrapes: 120 rows, where the overview has 4 (one per 30 s).
    const res = await a.handlers.getSeries({
      deploymentId: id,
      keys: ['prefill.kv_ratio'],
      fromMs: from,
      toMs: from + 120_000,
      maxPoints: 1000,
    });
    expect(res.decimated).toBe(false);
    expect(res.series[0].t.length).toBeGreaterThanOrEqual(110);
  });

  it('serves the whole session to the same charts, decimated, and says what was never exposed', async () => {
    const a = await freshApp();
    const { summary } = await a.handlers.openSessionReview({ id: session.id });
    const id = summary.deployment.id;
    const res = await a.handlers.getSeries({
      deploymentId: id,
      keys: ['decode.kv_ratio', 'router.router_requests_per_s', 'decode.kv_transfer_latency_p50_ms'],
      maxPoints: 200,
    });
    expect(res.firstMs).toBeLessThanOrEqual(summary.review!.firstTs + 1000);
    expect(res.decimated).toBe(true);
    const kv = res.series[0];
    expect(kv.t.length).toBeGreaterThan(50);
    expect(kv.t.length).toBeLessThanOrEqual(260);
    expect(kv.v.some((v) => v !== null && v > 0)).toBe(true);
    // The decode outage is a gap, not a line.
    expect(kv.v.filter((v) => v === null).length).toBeGreaterThan(0);
    expect(res.series[1].v.some((v) => v !== null && v > 0)).toBe(true);
    // The decode server of this session exports no kv_transfer_latency histogram.
    expect(res.missing['decode.kv_transfer_latency_p50_ms']?.expected).toEqual([
      'sglang:kv_transfer_latency_ms',
    ]);
    const catalog = await a.handlers.getSignalCatalog({ deploymentId: id });
    expect(catalog.some((c) => c.key === 'decode.kv_ratio')).toBe(true);
  });

  it('moves the cursor: cards get the state at that moment, pushed like a live poll', async () => {
    const a = await freshApp();
    const { summary } = await a.handlers.openSessionReview({ id: session.id });
    const id = summary.deployment.id;
    const pushed = capture(a, 'observation');
    const dashboards = capture(a, 'dashboard');

    const during = await a.handlers.setReviewCursor({ deploymentId: id, ts: session.crashAt + 30_000 });
    const decode = during.observation.services.find((s) => s.role === 'decode')!;
    expect(decode.systemd?.activeState).toBe('activating');
    expect(decode.health?.ok).toBe(false);
    expect(decode.metrics).toMatchObject({ ok: false });
    expect(decode.kv).toBeUndefined();
    expect(during.dashboard.alerts.map((x) => x.title)).toEqual([
      'decode exited: CUDA error: an illegal memory access',
    ]);
    expect(pushed.at(-1)?.deploymentId).toBe(id);
    expect(dashboards.at(-1)?.ts).toBe(during.ts);

    const before = await a.handlers.setReviewCursor({ deploymentId: id, ts: session.crashAt - 60_000 });
    const d2 = before.observation.services.find((s) => s.role === 'decode')!;
    expect(d2.systemd?.activeState).toBe('active');
    expect(d2.metrics).toMatchObject({ ok: true });
    expect(d2.kv?.source).toBe('kv_tokens');
    expect(d2.kv!.ratio).toBeCloseTo(before.dashboard.values['decode.kv_ratio']!, 6);
    expect(before.dashboard.alerts).toEqual([]);
    // Its one host's GPU table says why it is empty.
    const gpus = Object.values(before.dashboard.gpu);
    expect(gpus).toHaveLength(1);
    expect(gpus[0].error).toMatch(/this recording holds no GPU readings/);

    // Clamped to the recording.
    const far = await a.handlers.setReviewCursor({ deploymentId: id, ts: 0 });
    expect(far.ts).toBe(summary.review!.firstTs);
  });

  it('shows the recorded journal around a moment and refuses live actions', async () => {
    const a = await freshApp();
    const { summary } = await a.handlers.openSessionReview({ id: session.id });
    const id = summary.deployment.id;
    const around = await a.handlers.journalAround({ deploymentId: id, ts: session.crashAt, spanMs: 20_000 });
    expect(around.lines.some((l) => /CUDA error/.test(l.message))).toBe(true);
    expect(around.lines.every((l) => Math.abs(l.ts - session.crashAt) <= 20_000)).toBe(true);
    const prefillOnly = await a.handlers.journalAround({
      deploymentId: id,
      ts: session.crashAt,
      role: 'prefill',
    });
    // every() holds on an empty list: there must be prefill lines, and only those.
    expect(prefillOnly.lines.length).toBeGreaterThan(0);
    expect(prefillOnly.lines.length).toBeLessThan(around.lines.length);
    expect(prefillOnly.lines.every((l) => l.unit === 'sglang-prefill.service')).toBe(true);

    await expect(a.handlers.planRestart({ deploymentId: id, target: 'decode' })).rejects.toMatchObject({
      code: 'review-read-only',
    });
    await expect(
      a.handlers.demoControl({ deploymentId: id, fault: 'kv-full', on: true }),
    ).rejects.toMatchObject({ code: 'review-read-only' });
    expect(await a.handlers.listRestarts({ deploymentId: id })).toEqual([]);
    const follow = await a.handlers.followJournal({ deploymentId: id, role: 'decode', lines: 50 });
    expect(follow.command).toMatch(/not followed/);
    expect(follow.lines.length).toBeGreaterThan(0);
    expect(follow.lines.every((l) => l.ts <= summary.review!.cursor)).toBe(true);

    await a.handlers.closeDeployment({ deploymentId: id });
    expect((await a.handlers.listDeployments({})).some((d) => d.deployment.id === id)).toBe(false);
    await expect(
      a.handlers.getSeries({ deploymentId: id, keys: ['decode.kv_ratio'], maxPoints: 10 }),
    ).rejects.toMatchObject({
      code: 'unknown-deployment',
    });
  });

  it('opens the second time from the review cache with the same data', async () => {
    const a = await freshApp();
    const first = await a.handlers.openSessionReview({ id: session.id });
    const q: Omit<SeriesQuery, 'deploymentId'> = {
      keys: ['decode.kv_ratio', 'prefill.ttft_p99_s', 'decode.active'],
      maxPoints: 500,
    };
    const s1 = await a.handlers.getSeries({ deploymentId: first.summary.deployment.id, ...q });
    await a.handlers.closeDeployment({ deploymentId: first.summary.deployment.id });
    // The cache entry is written right after the first open; the .rvc file is renamed into place last.
    await expect
      .poll(
        async () =>
          (await readdir(join(dataDir, 'cache', 'review')).catch(() => [] as string[])).filter((f) =>
            f.endsWith('.rvc'),
          ).length,
        { timeout: 10_000 },
      )
      .toBeGreaterThan(0);
    const second = await a.handlers.openSessionReview({ id: session.id });
    expect(second.summary.review!.loadedFrom).toBe('cache');
    expect(second.events).toEqual(first.events);
    const s2 = await a.handlers.getSeries({ deploymentId: second.summary.deployment.id, ...q });
    expect(s2).toEqual(s1);
    const j = await a.handlers.journalAround({
      deploymentId: second.summary.deployment.id,
      ts: session.crashAt,
    });
    expect(j.lines.some((l) => /CUDA error/.test(l.message))).toBe(true);
    const recent = await a.handlers.listRecentReviews({});
    expect(recent[0]).toMatchObject({ key: session.id, sessionId: session.id, exists: true });
  });

  it('adds a note made in review to its timeline at once', async () => {
    const a = await freshApp();
    const { summary } = await a.handlers.openSessionReview({ id: session.id });
    const pushed = capture(a, 'event');
    await a.handlers.annotateSession({
      id: session.id,
      ts: session.crashAt + 5000,
      text: 'decode OOM here?',
    });
    expect(pushed.map((e) => [e.deploymentId, e.kind, e.title])).toEqual([
      [summary.deployment.id, 'annotation', 'decode OOM here?'],
    ]);
    const events = await a.handlers.listEvents({ deploymentId: summary.deployment.id });
    expect(events.find((e) => e.kind === 'annotation')?.ts).toBe(session.crashAt + 5000);
  });
});

describe('review cache made when a session stops recording', () => {
  it('builds the cache in the background, so the first review of a finished session is instant', async () => {
    const a = await freshApp();
    const finished = await writeSession(join(dataDir, 'recordings'), 2, { seed: 5 });
    const status = await a.handlers.getRecordingStatus({});
    const active = {
      deploymentId: 'demo',
      sessionId: finished.id,
      path: finished.path,
      state: 'recording' as const,
      bytesWritten: 0,
      samples: 0,
    };
    // What the recording service pushes while it records, and once the deployment is closed.
    a.core.emit('recordingStatus', { ...status, active: [active] });
    a.core.emit('recordingStatus', { ...status, active: [] });
    const entries = async (): Promise<number> =>
      (await readdir(join(dataDir, 'cache', 'review')).catch(() => [] as string[])).filter((n) =>
        n.endsWith('.rvc'),
      ).length;
    const before = await entries();
    await expect.poll(entries, { timeout: 20_000 }).toBe(before + 1);
    const r = await a.handlers.openSessionReview({ id: finished.id });
    expect(r.summary.review!.loadedFrom).toBe('cache');
  });
});

describe('a closed recording whose overview, index or data is damaged', () => {
  /** 21 minutes: overview members after 10 and 20 minutes and at close, then the index. */
  let long: WrittenSession;
  let members: ReturnType<typeof scanMarked>;
  beforeAll(async () => {
    long = await writeSession(join(dataDir, 'recordings'), 21, { seed: 7 });
    members = scanMarked(await readFile(long.path));
  }, 120_000);

  /** A copy of the long session, edited, as session `id` of the recordings folder. */
  async function copyAs(id: string, edit: (b: Buffer) => Buffer): Promise<string> {
    const b = edit(Buffer.from(await readFile(long.path)));
    await writeFile(join(dataDir, 'recordings', `${id}.pdrec.jsonl.gz`), b);
    return id;
  }

  it('is rebuilt from the data when its overview is damaged, saying where and how long that took', async () => {
    const a = await freshApp();
    const intact = (await a.handlers.openSessionReview({ id: long.id })).summary.review!;
    const first = members[0];
    const id = await copyAs('damaged-overview', (b) => {
      b[first.at + 200] ^= 0xff;
      return b;
    });
    const { summary } = await a.handlers.openSessionReview({ id });
    const rv = summary.review!;
    expect(rv.loadedFrom).toBe('recording');
    expect(rv.closedCleanly).toBe(true);
    expect([rv.firstTs, rv.lastTs]).toEqual([intact.firstTs, intact.lastTs]);
    expect(rv.warnings).toEqual([
      expect.stringMatching(
        new RegExp(
          `^The recording's overview at byte ${first.at} \\(2026-.+ to 2026-.+\\) is damaged \\(.+\\)\\. It only makes opening fast: the data is intact and all of it is shown`,
        ),
      ),
      expect.stringMatching(
        /^The review was rebuilt from the recording's data in \d+\.\d s, as its overview is damaged\.$/,
      ),
    ]);
  });

  it('tells the window what the full read found after an open from the overview: a missing index, damaged data', async () => {
    const a = await freshApp();
    const updates = capture(a, 'reviewUpdated');
    // Copied up to the overview member written at close: every data record is there, the index is not.
    const closing = members[members.length - 2];
    const cut = await copyAs('cut-after-close', (b) => b.subarray(0, closing.at));
    const opened = await a.handlers.openSessionReview({ id: cut });
    expect(opened.summary.review).toMatchObject({ loadedFrom: 'overview', closedCleanly: false });
    expect(opened.summary.review!.warnings).toEqual([
      expect.stringMatching(
        /^The recording has no index at its end \(it was not closed, or it was cut short\)/,
      ),
    ]);
    await expect.poll(() => updates.length, { timeout: 60_000 }).toBe(1);
    expect(updates[0].deploymentId).toBe(opened.summary.deployment.id);
    expect(updates[0].review.closedCleanly).toBe(true);
    expect(updates[0].review.warnings).toEqual([
      expect.stringMatching(
        new RegExp(
          `^The recording's index is missing: the file ends at byte ${closing.at}, after its end record`,
        ),
      ),
    ]);
    // What the deployment list says from now on, too.
    const listed = (await a.handlers.listDeployments({})).find(
      (d) => d.deployment.id === opened.summary.deployment.id,
    );
    expect(listed!.review!.warnings).toEqual(updates[0].review.warnings);

    // A byte of the data between the first two overview members: the overview (intact) is what opens; the
    // full read stops at the damage, and says from when.
    const at = Math.floor((members[0].at + members[0].length + members[1].at) / 2);
    const damaged = await copyAs('damaged-data', (b) => {
      b[at] ^= 0xff;
      return b;
    });
    const second = await a.handlers.openSessionReview({ id: damaged });
    expect(second.summary.review).toMatchObject({
      loadedFrom: 'overview',
      closedCleanly: true,
      warnings: [],
    });
    await expect.poll(() => updates.length, { timeout: 60_000 }).toBe(2);
    const u = updates[1].review;
    expect(u.closedCleanly).toBe(false);
    expect(u.warnings).toEqual([
      expect.stringMatching(
        /^The recording is damaged \(.+\): nothing after 2026-01-05T08:\d\d:[\d.]+Z \(the last intact record\) could be read; every block before it matched its checksum\.$/,
      ),
    ]);
    expect(u.lastTs).toBeLessThan(second.summary.review!.lastTs);
  }, 120_000);
});

describe('review of damaged and foreign files', () => {
  it('opens a recording cut short by a crash with what was lost, and refuses files that are not recordings', async () => {
    const a = await freshApp();
    const dir = join(dataDir, 'recordings');
    const full = (await readFile(session.path)).length;
    const cut = join(dir, 'cut-session.pdrec.jsonl.gz');
    await copyFile(session.path, cut);
    await truncate(cut, Math.floor(full * 0.6));
    const r = await a.handlers.openSessionReview({ id: 'cut-session' });
    expect(r.summary.review!.closedCleanly).toBe(false);
    expect(r.summary.review!.warnings.join(' ')).toMatch(/not closed|damaged/);
    expect(r.summary.review!.lastTs).toBeLessThan(session.lastTs);

    await writeFile(join(dir, 'text.pdrec.jsonl.gz'), 'hello\n');
    await expect(a.handlers.openSessionReview({ id: 'text' })).rejects.toMatchObject({
      code: 'not-a-recording',
    });
    const newer = gzipSync(
      JSON.stringify({ format: 'pd-console-recording', version: 2, minorVersion: 0, sessionId: 'x' }) + '\n',
    );
    await writeFile(join(dir, 'newer.pdrec.jsonl.gz'), newer);
    await expect(a.handlers.openSessionReview({ id: 'newer' })).rejects.toMatchObject({
      code: 'newer-version',
    });
    await expect(a.handlers.openSessionReview({ id: 'gone' })).rejects.toMatchObject({ code: 'not-found' });
    await rm(cut);
  });

  it('takes a dropped file in chunks, keeps it in the recordings folder and opens it', async () => {
    const a = await freshApp();
    const other = await mkdtemp(join(tmpdir(), 'pdc-review-drop-'));
    const dropped = await writeSession(other, 2, { seed: 9 });
    const bytes = await readFile(dropped.path);
    const { uploadId, chunkBytes } = await a.handlers.beginRecordingUpload({
      name: 'from-a-colleague.pdrec.jsonl.gz',
      sizeBytes: bytes.length,
    });
    for (let off = 0; off < bytes.length; off += chunkBytes)
      await a.handlers.uploadRecordingChunk({
        uploadId,
        offset: off,
        data: bytes.subarray(off, off + chunkBytes).toString('base64'),
      });
    const r = await a.handlers.finishRecordingUpload({ uploadId });
    expect(r.summary.review!.sessionId).toBe(dropped.id);
    expect(r.events.some((e) => e.kind === 'alert')).toBe(true);
    expect((await a.handlers.listSessions({})).map((s) => s.id)).toContain(dropped.id);

    // Not a recording: refused with the file's own name, nothing left behind.
    const junk = Buffer.from('not a recording at all');
    const u2 = await a.handlers.beginRecordingUpload({ name: 'notes.txt', sizeBytes: junk.length });
    await a.handlers.uploadRecordingChunk({
      uploadId: u2.uploadId,
      offset: 0,
      data: junk.toString('base64'),
    });
    await expect(a.handlers.finishRecordingUpload({ uploadId: u2.uploadId })).rejects.toMatchObject({
      code: 'not-a-recording',
      message: expect.stringContaining('notes.txt'),
    });
    const u3 = await a.handlers.beginRecordingUpload({ name: 'x.gz', sizeBytes: 4 });
    await expect(
      a.handlers.uploadRecordingChunk({
        uploadId: u3.uploadId,
        offset: 0,
        data: Buffer.from('12345').toString('base64'),
      }),
    ).rejects.toMatchObject({ code: 'bad-chunk' });
    const left = (await readdir(join(dataDir, 'recordings'))).filter((n) => n.includes('.upload-'));
    expect(left).toEqual([]);
    await rm(other, { recursive: true, force: true });
  });
});

describe("re-saving an older session (the sessions list's Re-save)", () => {
  it('rewrites a 1.1 session in the current format: the note goes and a review opens it from its overview', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pdc-review-resave-'));
    try {
      const old = await writeSession(join(dir, 'recordings'), 3, { format: '1.1' });
      await app?.shutdown();
      app = createApp({ shell: 'browser', dataDir: dir, record: false });
      const before = (await app.handlers.listSessions({})).find((s) => s.id === old.id)!;
      expect(before.warnings).toEqual([OLD_FORMAT_NOTE]);
      const slow = await app.handlers.openSessionReview({ id: old.id });
      expect(slow.summary.review!.loadedFrom).toBe('recording');
      await app.handlers.closeDeployment({ deploymentId: slow.summary.deployment.id });

      const r = await app.handlers.resaveSession({ id: old.id });
      expect(r.fromMinorVersion).toBe(1);
      const after = (await app.handlers.listSessions({})).find((s) => s.id === old.id)!;
      expect(after).toMatchObject({ state: 'complete', warnings: [], durationMs: before.durationMs });
      const fast = await app.handlers.openSessionReview({ id: old.id });
      expect(fast.summary.review!.loadedFrom).toBe('overview');
      expect(fast.summary.review!.warnings).toEqual([]);
      expect(fast.events).toEqual(slow.events);
      await app.handlers.closeDeployment({ deploymentId: fast.summary.deployment.id });

      await expect(app.handlers.resaveSession({ id: '20990101-000000Z-ffffff' })).rejects.toThrow(
        /No recorded session 20990101-000000Z-ffffff/,
      );
    } finally {
      await app?.shutdown();
      app = undefined;
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
