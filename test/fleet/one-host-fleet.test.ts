// A one-host 1P1D deployment is a fleet of one router, one prefill and one decode on one host: the same model
// and path as any fleet (ids, one host in the list, keys scoped by worker), and named as simply as ever — each
// the only worker of its role, so the verdict speaks of "decode", not of "decode-0 on demo".
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { createApp } from '../../src/main/compose';
import type { Observation } from '../../src/shared/domain';

it('opens the single demo host as a fleet of one router, one prefill, one decode', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'pd-one-host-'));
  const app = createApp({ shell: 'browser', intervalMs: 300, dataDir: dir, record: false });
  try {
    const s = await app.handlers.openDemo({});
    expect(s.hosts?.map((h) => h.host.id)).toEqual(['demo']);
    expect(s.fleet?.hosts.map((h) => h.id)).toEqual(['demo']);
    expect(s.fleet?.workers.map((w) => [w.role, w.host])).toEqual([
      ['prefill', 'demo'],
      ['decode', 'demo'],
    ]);
    expect(s.deployment.services.map((x) => [x.role, x.id, x.hostId])).toEqual([
      ['prefill', 'prefill-0', 'demo'],
      ['decode', 'decode-0', 'demo'],
      ['router', 'router', 'demo'],
    ]);
    const o = await new Promise<Observation>((resolve) => {
      const on = (x: Observation): void => {
        if (!x.services.some((y) => y.kv)) return;
        app.core.off('observation', on);
        resolve(x);
      };
      app.core.on('observation', on);
    });
    expect(o.services.map((x) => [x.id, x.hostId])).toEqual(
      expect.arrayContaining([
        ['prefill-0', 'demo'],
        ['decode-0', 'demo'],
        ['router', 'demo'],
      ]),
    );
    const snap = await app.handlers.getDashboard({ deploymentId: s.deployment.id });
    const keys = Object.keys(snap.values);
    expect(keys).toContain('decode.kv_ratio@decode-0');
    expect(keys).toContain('prefill.queued@prefill-0');
    expect(keys).toContain('router.health_ok@router');
    // The only worker of its role is spoken of by its role, with no host when there is one.
    const said = [snap.verdict.headline, ...snap.verdict.evidence, snap.verdict.nextStep].join('\n');
    expect(said).not.toMatch(/decode-0|prefill-0| on demo\b/);
  } finally {
    await app.shutdown();
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
