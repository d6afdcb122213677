// The one-host 1P1D demo stays exactly as it was before fleets: no service ids, no per-host list, no fleet on
// its summary, observations without ids or hosts per service, and the role keys as its only series keys.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { createApp } from '../../src/main/compose';
import type { Observation } from '../../src/shared/domain';

it('opens the single demo host with no fleet fields anywhere', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'pd-one-host-'));
  const app = createApp({ shell: 'browser', intervalMs: 300, dataDir: dir, record: false });
  try {
    const s = await app.handlers.openDemo({});
    expect(s.hosts).toBeUndefined();
    expect(s.fleet).toBeUndefined();
    expect(s.deployment.services.map((x) => [x.role, x.id, x.units, x.workerUrl])).toEqual([
      ['prefill', undefined, undefined, undefined],
      ['decode', undefined, undefined, undefined],
      ['router', undefined, undefined, undefined],
    ]);
    const o = await new Promise<Observation>((resolve) => {
      const on = (x: Observation): void => {
        if (!x.services.some((y) => y.kv)) return;
        app.core.off('observation', on);
        resolve(x);
      };
      app.core.on('observation', on);
    });
    for (const x of o.services) {
      expect(Object.keys(x)).not.toContain('id');
      expect(Object.keys(x)).not.toContain('hostId');
      expect(Object.keys(x)).not.toContain('units');
    }
    const snap = await app.handlers.getDashboard({ deploymentId: s.deployment.id });
    const keys = Object.keys(snap.values);
    expect(keys).toContain('decode.kv_ratio');
    expect(keys.filter((k) => k.includes('@'))).toEqual([]);
  } finally {
    await app.shutdown();
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
