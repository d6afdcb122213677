// Every monitoring session is recorded: a live demo session ends up in a file that holds the scrapes of
// all three services, unit states, journal lines and timeline events; the session list knows it.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/main/compose';
import { buildReviewData } from '../../src/main/core/review/review-data';
import { readRecording } from '../../src/main/core/recording';
import { dispatch } from '../../src/main/api/dispatch';
import { KV_CAPACITY } from '../../src/main/demo';
import { nextObservation } from '../support/demo-core';
import { watchJournal } from '../support/journal-lines';

let app: App | undefined;
afterEach(async () => {
  await app?.shutdown();
  app = undefined;
});

describe('recording service', () => {
  it('records a live demo session and lists it; exports CSV and OpenMetrics', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pdc-rec-'));
    app = createApp({ shell: 'browser', intervalMs: 300, dataDir: dir });
    const s = await app.core.openDemo({});
    const id = s.deployment.id;
    await expect
      .poll(async () => (await app!.handlers.getRecordingStatus({})).active[0]?.samples ?? 0, {
        timeout: 15_000,
      })
      .toBeGreaterThan(500);
    const status = await app.handlers.getRecordingStatus({});
    expect(status.active[0]).toMatchObject({ deploymentId: id, state: 'recording' });
    app.core.addEvent(id, { ts: app.core.now, kind: 'alert', severity: 'warning', title: 'test alert' });
    // Journal lines are followed every 2 s: the decode server's next line, read live, is recorded.
    const journal = watchJournal(app.core, id, 'sglang-decode.service');
    await journal.live;
    await journal.lines('a live decode line', () => true, 1, 20_000);
    journal.dispose();
    // Five more polls, so that every scraped series holds more than three readings.
    for (let i = 0; i < 5; i++) await nextObservation(app.core, (o) => o.deploymentId === id, 10_000);
    const sessionId = status.active[0].sessionId!;
    const listed = await app.handlers.listSessions({});
    expect(listed.find((x) => x.id === sessionId)?.state).toBe('recording');
    await app.handlers.annotateSession({ id: sessionId, ts: app.core.now, text: 'looked fine here' });
    await app.core.closeDeployment({ deploymentId: id });
    await expect
      .poll(async () => (await app!.handlers.listSessions({})).find((x) => x.id === sessionId)?.state, {
        timeout: 10_000,
      })
      .toBe('complete');

    const rec = await readRecording(join(dir, 'recordings', `${sessionId}.pdrec.jsonl.gz`));
    expect(rec.closedCleanly).toBe(true);
    expect(rec.warnings).toEqual([]);
    const targets = new Set(rec.series.map((x) => x.target));
    // Each worker's scrapes, and what the monitor itself read: the host's nvidia-smi and each poll's scrape health.
    expect([...targets].sort()).toEqual([
      'decode@decode-0',
      'gpu@demo',
      'monitor',
      'prefill@prefill-0',
      'router@router',
    ]);
    const temps = rec.series.filter(
      (x) => x.target === 'gpu@demo' && x.name === 'pdc_gpu_temperature_celsius',
    );
    expect(temps.map((x) => x.labels.gpu).sort()).toEqual(['0', '1', '2', '3', '4', '5', '6', '7']);
    for (const t of temps) {
      expect(t.v.length).toBeGreaterThan(0);
      expect(Number.isFinite(t.v[0])).toBe(true);
    }
    const durations = rec.series.filter(
      (x) => x.target === 'monitor' && x.name === 'scrape_duration_seconds',
    );
    expect(durations.map((x) => x.labels.role).sort()).toEqual(['decode', 'prefill', 'router']);
    for (const d of durations) expect(d.v.some((v) => v > 0)).toBe(true);
    const used = rec.series.find((x) => x.name === 'sglang:kv_used_tokens' && x.target === 'decode@decode-0');
    expect(used && used.v.length).toBeGreaterThan(3);
    expect(rec.unitStates.map((u) => u.source).sort()).toEqual([
      'decode@decode-0',
      'prefill@prefill-0',
      'router@router',
    ]);
    expect(rec.events.some((e) => e.title === 'test alert')).toBe(true);
    expect(rec.events.some((e) => e.kind === 'annotation' && e.title.includes('looked fine here'))).toBe(
      true,
    );
    expect(rec.journal.length).toBeGreaterThan(0);

    const csv = await app.handlers.exportSession({ id: sessionId, format: 'csv' });
    expect(csv.bytes).toBeGreaterThan(1000);
    // The charted signals by default (a column per key); every raw series on request, larger.
    expect(csv.fileName).toMatch(/\.signals\.csv$/);
    expect(readFileSync(csv.path, 'utf8').split('\n')[0]).toContain('decode.kv_ratio');
    const raw = await app.handlers.exportSession({ id: sessionId, format: 'csv-raw' });
    expect(readFileSync(raw.path, 'utf8').split('\n')[0]).toBe(
      'timestamp_ms,time_utc,target,metric,labels,value',
    );
    expect(raw.bytes).toBeGreaterThan(csv.bytes);
    const om = await app.handlers.exportSession({ id: sessionId, format: 'openmetrics' });
    expect(om.path).toMatch(/\.om\.txt$/);
    await expect(app.handlers.deleteSession({ id: sessionId })).resolves.toBeUndefined();
    expect((await app.handlers.listSessions({})).some((x) => x.id === sessionId)).toBe(false);
  }, 60_000);

  it('records the KV capacity read from /server_info for servers that do not export it (era E1)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pdc-rec-e1-'));
    app = createApp({ shell: 'browser', intervalMs: 300, dataDir: dir, demoEra: 'E1' });
    const s = await app.core.openDemo({});
    const seen = new Promise<void>((resolve) =>
      app!.core.on('observation', (o) => {
        if (o.services.filter((x) => x.kv?.capacityTokens).length === 2) resolve();
      }),
    );
    await seen;
    const sessionId = (await app.handlers.getRecordingStatus({})).active[0].sessionId!;
    // Two more polls, then the file is closed.
    for (let i = 0; i < 2; i++)
      await nextObservation(app.core, (o) => o.deploymentId === s.deployment.id, 10_000);
    await app.core.closeDeployment({ deploymentId: s.deployment.id });
    await expect
      .poll(async () => (await app!.handlers.listSessions({})).find((x) => x.id === sessionId)?.state, {
        timeout: 10_000,
      })
      .toBe('complete');
    const rec = await readRecording(join(dir, 'recordings', `${sessionId}.pdrec.jsonl.gz`));
    const capacity = rec.series.filter(
      (x) => x.target === 'monitor' && x.name === 'pdc_server_info_max_total_num_tokens',
    );
    expect(capacity.map((x) => x.labels.role).sort()).toEqual(['decode', 'prefill']);
    for (const c of capacity)
      expect(new Set(c.v), c.labels.role).toEqual(
        new Set([KV_CAPACITY[c.labels.role as 'prefill' | 'decode']]),
      );
    // The servers' own scrapes hold no capacity gauge in this era: the recording has it only from /server_info.
    expect(rec.series.some((x) => x.name === 'sglang:max_total_num_tokens')).toBe(false);
    // …and review uses it: the E1 servers' KV usage (token_usage × capacity) is there, as live.
    const data = buildReviewData(rec);
    for (const role of ['prefill', 'decode'] as const) {
      const g = data.table.groups.get(role)!;
      const capacityCol = [...g.cols.get(`${role}.kv_capacity`)!].filter((v) => v === v);
      expect(capacityCol.length, role).toBeGreaterThan(0);
      expect(new Set(capacityCol), role).toEqual(new Set([KV_CAPACITY[role]]));
      const ratio = [...g.cols.get(`${role}.kv_ratio`)!].filter((v) => v === v);
      expect(ratio.length, role).toBe(capacityCol.length);
      expect(data.kv.get(role)!.metas[0].sourceMetrics, role).toContain('/server_info max_total_num_tokens');
    }
    expect(data.notExposed['decode.kv_ratio']).toBeUndefined();
  }, 60_000);

  it('a session that does not exist is not-found, naming the session and not the data folder, for every request', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pdc-rec-missing-'));
    app = createApp({ shell: 'browser', dataDir: dir, record: false });
    const id = '20260105-080000Z-abcdef';
    const calls: [string, Record<string, unknown>][] = [
      ['renameSession', { id, name: 'x' }],
      ['annotateSession', { id, ts: Date.now(), text: 'note' }],
      ['deleteSession', { id }],
      ['exportSession', { id, format: 'csv' }],
      ['exportSession', { id, format: 'csv-raw' }],
      ['exportSession', { id, format: 'openmetrics' }],
      ['exportSession', { id, format: 'bundle' }],
      ['openSessionReview', { id }],
    ];
    for (const [method, args] of calls) {
      const r = await dispatch(app.handlers, method, args);
      expect(r.ok, method).toBe(false);
      if (r.ok) continue;
      expect(r.error, `${method} ${JSON.stringify(args)}`).toMatchObject({
        code: 'not-found',
        message: `no recorded session "${id}"`,
      });
      expect(r.error.hint, method).toMatch(/refresh the sessions list/);
      expect(JSON.stringify(r.error), method).not.toContain(dir);
    }
  });

  it('a demo run 10× faster than real time records everything on one clock: journal lines sit among the scrapes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pdc-rec-speed-'));
    app = createApp({ shell: 'browser', intervalMs: 300, dataDir: dir, demoSpeed: 10 });
    const wallStart = Date.now();
    const s = await app.core.openDemo({});
    await expect
      .poll(async () => (await app!.handlers.getRecordingStatus({})).active[0]?.state, { timeout: 10_000 })
      .toBe('recording');
    const sessionId = (await app.handlers.getRecordingStatus({})).active[0].sessionId!;
    // Journal polls every 2 s of wall time, i.e. 20 s of the demo's own time each, until more than five lines.
    const journal = watchJournal(app.core, s.deployment.id, 'sglang-decode.service');
    await journal.live;
    await journal.lines('six live decode lines', () => true, 6, 30_000);
    journal.dispose();
    // Then a poll after the last of them: scrapes frame the lines, as in a session that goes on.
    for (let i = 0; i < 2; i++)
      await nextObservation(app.core, (o) => o.deploymentId === s.deployment.id, 10_000);
    await app.core.closeDeployment({ deploymentId: s.deployment.id });
    const wallMs = Date.now() - wallStart;
    await expect
      .poll(async () => (await app!.handlers.listSessions({})).find((x) => x.id === sessionId)?.state, {
        timeout: 10_000,
      })
      .toBe('complete');
    const info = (await app.handlers.listSessions({})).find((x) => x.id === sessionId)!;
    const rec = await readRecording(join(dir, 'recordings', `${sessionId}.pdrec.jsonl.gz`));
    const scrapeTimes = rec.series.flatMap((x) => [x.t[0], x.t[x.t.length - 1]]);
    const firstScrape = Math.min(...scrapeTimes);
    const lastScrape = Math.max(...scrapeTimes);
    expect(rec.journal.length).toBeGreaterThan(5);
    // Lines are stamped on the demo's clock, 10× faster; recorded, they are on the scrapes' clock. A line may
    // follow the last scrape by less than a poll interval.
    for (const j of rec.journal) {
      expect(j.ts).toBeGreaterThanOrEqual(rec.header.startedAt);
      expect(j.ts).toBeLessThanOrEqual(lastScrape + 1000);
    }
    expect(firstScrape).toBeGreaterThanOrEqual(rec.header.startedAt);
    // The session lasts what it lasted on the wall clock (it read "9m 37s" for a minute before).
    expect(info.durationMs).toBeLessThanOrEqual(wallMs);
    expect(rec.lastTs - rec.header.startedAt).toBeLessThanOrEqual(wallMs);
  }, 60_000);
});
