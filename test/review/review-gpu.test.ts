// GPU readings are read by the monitor, shown live, recorded, and shown again in review: the same keys
// (gpu.<index>.<field>@<host>) with the same values at the same moments, and the GPU table at the review cursor.
import type { SignalKey } from '../../src/shared/signals/spec';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/main/compose';
import { readRecording } from '../../src/main/core/recording';

let app: App | undefined;
afterEach(async () => {
  await app?.shutdown();
  app = undefined;
});

describe('GPU readings in review', () => {
  it('a recorded session shows the GPU readings seen live: same keys, times and values; the GPU table at the cursor', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pdc-review-gpu-'));
    app = createApp({ shell: 'browser', intervalMs: 500, dataDir: dir });
    const live = new Map<number, Record<string, number | null>>();
    app.core.on('signals', (e) => {
      if (Object.keys(e.values).some((k) => k.startsWith('gpu.'))) live.set(e.ts, e.values);
    });
    const s = await app.core.openDemo({});
    const id = s.deployment.id;
    // nvidia-smi is read every 5 s: wait for three readings.
    const until = Date.now() + 30_000;
    while (live.size < 3 && Date.now() < until) await new Promise((r) => setTimeout(r, 200));
    expect(live.size).toBeGreaterThanOrEqual(3);
    const sessionId = (await app.handlers.getRecordingStatus({})).active[0].sessionId!;
    // The writer flushes every 2 s; the session is read while it is still being recorded, then once closed.
    await app.core.closeDeployment({ deploymentId: id });
    await app.handlers.listSessions({});
    const rec = await readRecording(join(dir, 'recordings', `${sessionId}.pdrec.jsonl.gz`));
    const util4 = rec.series.find(
      (x) => x.target === 'gpu@demo' && x.name === 'pdc_gpu_utilization_percent' && x.labels.gpu === '4',
    );
    expect(util4).toBeDefined();

    const opened = await app.handlers.openSessionReview({ id: sessionId });
    const rid = opened.summary.deployment.id;
    const catalog = await app.handlers.getSignalCatalog({ deploymentId: rid });
    // The catalog names each signal once, by its spec key; the series are asked for per host.
    for (const k of ['gpu.0.util', 'gpu.7.temp', 'gpu.4.mem_used', 'gpu.4.power'])
      expect(catalog.map((c) => c.key)).toContain(k);
    // Every host's GPU readings are scoped by the host (`gpu.4.util@demo`).
    const keys = [
      'gpu.4.util@demo',
      'gpu.4.temp@demo',
      'gpu.4.mem_used@demo',
      'gpu.0.power@demo',
    ] as string[] as SignalKey[];
    const res = await app.handlers.getSeries({ deploymentId: rid, keys, maxPoints: 1000 });
    expect(res.missing).toEqual({});
    for (const [i, key] of keys.entries()) {
      const col = res.series[i];
      expect(col.key).toBe(key);
      expect(col.t.length).toBeGreaterThanOrEqual(live.size);
      // Every reading pushed live is in the review, at the same time, with the same value (float32 columns).
      for (const [ts, values] of live) {
        const k = col.t.indexOf(ts);
        expect(k, `${key} at ${ts}`).toBeGreaterThanOrEqual(0);
        const want = values[key];
        if (want === null || want === undefined) expect(col.v[k]).toBeNull();
        else expect(col.v[k]).toBeCloseTo(want, key.endsWith('mem_used') ? -5 : 3);
      }
    }

    // The GPU table at the cursor: the reading at or before it.
    const lastTs = Math.max(...live.keys());
    const at = await app.handlers.setReviewCursor({ deploymentId: rid, ts: lastTs });
    const gpu = at.dashboard.gpu.demo;
    expect(gpu.error).toBeUndefined();
    expect(gpu.ts).toBe(lastTs);
    expect(gpu.gpus.map((g) => g.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(gpu.gpus[4].tempC).toBeCloseTo(live.get(lastTs)!['gpu.4.temp@demo']!, 3);
  }, 90_000);
});
