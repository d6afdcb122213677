// The recordings folder as the operator sees it: list with name/host/deployment/start/duration/size, rename,
// notes pinned to a time, delete, and a size limit that never removes the session being recorded.
import { REVIEW_OVERVIEW } from '../../src/main/core/review/overview-table';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readFile, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SessionStore, type RecordingWriter } from '../../src/main/core/recording';
import { exposition, manualClock, tempDir } from './helpers';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
});
afterEach(async () => {
  await cleanup();
});

const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 0, 5, 8);

function base(startedAt: number, deployment = 'Demo PD') {
  return {
    startedAt,
    host: { id: 'gpu-01', label: 'gpu-host-01', kind: 'ssh' as const },
    deployment: { id: deployment.toLowerCase().replace(/\W/g, '-'), name: deployment, services: [] },
    appVersion: '0.1.0-test',
  };
}

/** Records `seconds` scrapes of ~50 noisy series at 1 s. */
function fill(w: RecordingWriter, start: number, seconds: number): void {
  for (let i = 0; i < seconds; i++)
    w.appendScrape(
      start + i * 1000,
      'decode',
      exposition(
        Array.from({ length: 50 }, (_, k) => ({
          name: `m${k}`,
          type: 'gauge' as const,
          samples: [
            [`m${k}`, { k: String(k) }, Math.sin(i * k) * 1000] as [string, Record<string, string>, number],
          ],
        })),
      ),
    );
}

async function recordClosed(
  store: SessionStore,
  start: number,
  seconds: number,
  name?: string,
): Promise<string> {
  // The overview the recording service writes (format 1.3): a current file has no format note.
  const { id, writer } = await store.start(
    { ...base(start), name },
    { clock: manualClock(start), overview: REVIEW_OVERVIEW },
  );
  fill(writer, start + 500, seconds);
  await writer.close();
  return id;
}

describe('SessionStore', () => {
  it('lists sessions with name, host, deployment, start, duration, size and state', async () => {
    const store = new SessionStore(dir, { clock: manualClock(T0 + 10 * HOUR) });
    const a = await recordClosed(store, T0, 120);
    const { id: b, writer } = await store.start({ ...base(T0 + HOUR, 'Other PD'), name: 'load test' });
    fill(writer, T0 + HOUR + 1000, 10);
    await writer.flush();

    const list = await store.list();
    expect(list.map((s) => s.id)).toEqual([b, a]);
    const [sb, sa] = list;
    expect(sa).toMatchObject({
      name: 'Demo PD on gpu-host-01',
      hostId: 'gpu-01',
      hostLabel: 'gpu-host-01',
      deploymentName: 'Demo PD',
      startedAt: T0,
      state: 'complete',
      warnings: [],
    });
    expect(sa.durationMs).toBe(120_500 - 1000);
    expect(sa.sizeBytes).toBeGreaterThan(1000);
    expect(sb).toMatchObject({ name: 'load test', deploymentName: 'Other PD', state: 'recording' });
    expect(sb.durationMs).toBe(10_000);
    await writer.close();
    expect((await store.list())[0].state).toBe('complete');
  });

  it('renames and annotates, and open() shows both', async () => {
    const store = new SessionStore(dir);
    const id = await recordClosed(store, T0, 60);
    await store.rename(id, '  decode OOM investigation ');
    const note = await store.annotate(id, T0 + 30_000, 'decode restarted here');
    expect(note).toMatchObject({ kind: 'annotation', ts: T0 + 30_000, title: 'decode restarted here' });
    const info = (await store.list())[0];
    expect(info.name).toBe('decode OOM investigation');
    expect(info.annotations).toBe(1);
    const rec = await store.open(id);
    expect(rec.header.name).toBe('decode OOM investigation');
    expect(rec.events.map((e) => [e.kind, e.ts, e.title])).toEqual([
      ['annotation', T0 + 30_000, 'decode restarted here'],
    ]);
    // A time window leaves out notes outside it.
    expect((await store.open(id, { fromMs: T0 + 40_000 })).events).toEqual([]);
    await expect(store.rename(id, '   ')).rejects.toThrow(/1…200 characters/);
    await expect(store.annotate('no-such-session', T0, 'x')).rejects.toThrow(/No recorded session/);
  });

  it('puts notes on the session being recorded into the recording itself', async () => {
    const store = new SessionStore(dir);
    const { id, writer } = await store.start(base(T0), { clock: manualClock(T0) });
    fill(writer, T0, 5);
    await store.annotate(id, T0 + 2000, 'started load generator');
    await writer.close();
    const rec = await store.open(id);
    expect(rec.events.map((e) => e.title)).toEqual(['started load generator']);
    expect(
      JSON.parse(await readFile(join(dir, `${id}.meta.json`), 'utf8').catch(() => '{"annotations":[]}'))
        .annotations,
    ).toEqual([]);
  });

  it('deletes a session but refuses the one being recorded', async () => {
    const store = new SessionStore(dir);
    const old = await recordClosed(store, T0, 10);
    await store.rename(old, 'to delete');
    const { id: live, writer } = await store.start(base(T0 + HOUR));
    await expect(store.delete(live)).rejects.toThrow(/being recorded; stop the recording/);
    await store.delete(old);
    expect((await store.list()).map((s) => s.id)).toEqual([live]);
    await writer.close();
    await expect(store.delete('../etc/passwd')).rejects.toThrow(/Not a session id/);
  });

  it('enforces a size limit oldest first and never deletes the active session', async () => {
    const store = new SessionStore(dir);
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push(await recordClosed(store, T0 + i * HOUR, 200));
    // The session being recorded is the OLDEST by start time, to prove age alone does not decide.
    const { id: active, writer } = await store.start(base(T0 - HOUR));
    fill(writer, T0 - HOUR, 200);
    await writer.flush();
    const sizes = new Map((await store.list()).map((s) => [s.id, s.sizeBytes]));
    const total = [...sizes.values()].reduce((a, b) => a + b, 0);

    // Room for all but about two sessions: the two oldest closed ones go.
    const limit = total - sizes.get(ids[0])! - sizes.get(ids[1])! + 10;
    const r1 = await store.enforceRetention(limit, active);
    expect(r1.deleted).toEqual([ids[0], ids[1]]);
    expect(r1.totalBytes).toBeLessThanOrEqual(limit);
    expect(r1.overLimitBytes).toBe(0);

    // A zero limit deletes everything else, and reports what the active session still takes.
    const r2 = await store.enforceRetention(0, active);
    expect(r2.deleted).toEqual([ids[2], ids[3]]);
    expect((await store.list()).map((s) => s.id)).toEqual([active]);
    expect(r2.overLimitBytes).toBeGreaterThan(0);

    // Protected even when the caller forgets to name it: the store knows what it is recording.
    const r3 = await new SessionStore(dir).enforceRetention(0);
    expect(r3.deleted).toEqual([]);
    await writer.close();
    expect((await store.enforceRetention(0)).deleted).toEqual([active]);
  });

  it('shows an interrupted session with its real duration, and a broken file as damaged', async () => {
    const now = manualClock(T0 + 5 * HOUR);
    const store = new SessionStore(dir, { clock: now });
    // A recording that was never closed: copy the file while its writer is still open.
    const { id, writer } = await store.start(base(T0), { clock: manualClock(T0) });
    fill(writer, T0, 30);
    await writer.flush();
    const copyId = `${id}-copy`;
    const copyPath = join(dir, `${copyId}.pdrec.jsonl.gz`);
    await writeFile(copyPath, await readFile(join(dir, `${id}.pdrec.jsonl.gz`)));
    await writer.close();
    // Written an hour ago and never closed: not live in another app instance, so interrupted.
    const anHourAgo = new Date(Date.now() - HOUR);
    await utimes(copyPath, anHourAgo, anHourAgo);
    await writeFile(join(dir, 'garbage.pdrec.jsonl.gz'), 'not gzip at all');

    const list = await new SessionStore(dir, { clock: now }).list();
    const copy = list.find((s) => s.id === copyId)!;
    expect(copy.state).toBe('interrupted');
    expect(copy.durationMs).toBe(29_000);
    expect(copy.warnings[0]).toMatch(/not closed/);
    const bad = list.find((s) => s.id === 'garbage')!;
    expect(bad.state).toBe('damaged');
    expect(bad.warnings[0]).toMatch(/is not a PD Console recording/);
    // The summary is cached in the sidecar: listing again does not need the file's contents.
    const meta = JSON.parse(await readFile(join(dir, `${copyId}.meta.json`), 'utf8'));
    expect(meta.summary.endedAt).toBe(T0 + 29_000);
  });

  it('treats a fresh unclosed file as possibly recording in another app instance and keeps it', async () => {
    const store = new SessionStore(dir);
    const { id, writer } = await store.start(base(T0), { clock: manualClock(T0) });
    fill(writer, T0, 30);
    await writer.flush();
    const otherId = `${id}-other`;
    await writeFile(
      join(dir, `${otherId}.pdrec.jsonl.gz`),
      await readFile(join(dir, `${id}.pdrec.jsonl.gz`)),
    );
    await writer.close();
    const other = new SessionStore(dir);
    expect((await other.info(otherId)).state).toBe('recording');
    expect((await other.enforceRetention(0)).deleted).toEqual([id]);
    await expect(other.delete(otherId)).rejects.toThrow(/being recorded/);
  });
});
