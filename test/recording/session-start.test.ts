// A session's first seconds are in its recording. The file is created after the deployment opens (a folder, a
// file, retention), and its first scrapes come in the same second: on a busy machine, or a slow disk, they used
// to arrive before the writer existed and were dropped. Here the file takes 1.5 s to create while the demo
// host is polled every 200 ms, and every scrape, unit state and event from the open on is in the file.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { createApp, type App } from '../../src/main/compose';
import { readRecording } from '../../src/main/core/recording';

let app: App;
let dir: string;
const scrapes: number[] = [];
/** Polls that read systemd's unit states. */
const polls: number[] = [];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'pd-session-start-'));
  app = createApp({ shell: 'browser', intervalMs: 200, dataDir: dir, record: true });
  const start = app.recording.store.start.bind(app.recording.store);
  app.recording.store.start = async (...args) => {
    await new Promise((r) => setTimeout(r, 1500));
    return start(...args);
  };
});

afterAll(async () => {
  await app?.shutdown();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it('holds every scrape, unit state and event from the moment the deployment opened', async () => {
  app.core.hooks.on('scrape', (e) => {
    if (e.role === 'decode') scrapes.push(e.ts);
  });
  app.core.hooks.on('observed', (o) => {
    if (o.services.some((s) => s.systemd)) polls.push(o.ts);
  });
  const opened = await app.handlers.openDemo({});
  const id = opened.deployment.id;
  // Scrapes before the file exists, then some after it.
  await vi.waitFor(
    async () => {
      const s = await app.handlers.getRecordingStatus({});
      expect(s.active.find((a) => a.deploymentId === id)?.state).toBe('recording');
    },
    { timeout: 20_000, interval: 100 },
  );
  const before = scrapes.length;
  expect(before, 'decode scrapes while the file was being created').toBeGreaterThan(0);
  await vi.waitFor(() => expect(scrapes.length).toBeGreaterThan(before + 3), { timeout: 20_000 });
  const sessionId = (await app.handlers.getRecordingStatus({})).active.find(
    (a) => a.deploymentId === id,
  )!.sessionId!;
  const events = await app.handlers.listEvents({ deploymentId: id });
  await app.handlers.closeDeployment({ deploymentId: id });
  await vi.waitFor(
    async () =>
      expect((await app.handlers.listSessions({})).find((x) => x.id === sessionId)?.state).toBe('complete'),
    { timeout: 20_000 },
  );

  const rec = await readRecording(join(dir, 'recordings', `${sessionId}.pdrec.jsonl.gz`));
  expect(rec.warnings).toEqual([]);
  // The header's start is the open, not the moment the file appeared.
  expect(rec.header.startedAt).toBeLessThanOrEqual(Math.min(scrapes[0], polls[0]));
  const recorded = new Set(rec.series.filter((s) => s.target === 'decode@decode-0').flatMap((s) => [...s.t]));
  const live = scrapes.filter((t) => t <= rec.lastTs);
  expect(
    live.filter((t) => !recorded.has(t)),
    'decode scrapes missing from the file',
  ).toEqual([]);
  // The first unit states read, and the events the timeline had before the file existed.
  expect(rec.unitStates[0]?.ts).toBe(polls[0]);
  const early = events.filter((e) => e.ts < rec.firstTs + 1500).map((e) => e.title);
  const inFile = new Set(rec.events.map((e) => e.title));
  expect(early.filter((t) => !inFile.has(t))).toEqual([]);
}, 60_000);
