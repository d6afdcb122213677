// The live 'signals' push of a poll carries that poll's scrape values (running requests, from /metrics) and its
// own (systemd state, health), in one object that stays as it was sent: the dashboard hands on the values it
// gathered rather than a copy, so a later scrape must not write into a push already out.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/main/compose';

let app: App | undefined;
let dir: string | undefined;
afterEach(async () => {
  await app?.shutdown();
  app = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('live signals push', () => {
  it("holds a poll's scrape and observation values, and is not changed by the polls after it", async () => {
    dir = mkdtempSync(join(tmpdir(), 'pdc-dashboard-push-'));
    app = createApp({ shell: 'browser', intervalMs: 300, dataDir: dir, record: false });
    const pushes: { values: Record<string, number | null>; sent: string }[] = [];
    app.core.on('signals', (e) => {
      if ('decode.active' in e.values) pushes.push({ values: e.values, sent: JSON.stringify(e.values) });
    });
    await app.core.openDemo({});
    const until = Date.now() + 30_000;
    while (pushes.filter((p) => 'decode.running' in p.values).length < 4 && Date.now() < until)
      await new Promise((r) => setTimeout(r, 100));
    const both = pushes.filter((p) => 'decode.running' in p.values);
    expect(both.length).toBeGreaterThanOrEqual(4);
    for (const p of both) {
      expect(p.values['decode.active']).toBe(1);
      expect(p.values['prefill.health_ok']).toBe(1);
      expect(typeof p.values['decode.running']).toBe('number');
    }
    for (const p of pushes) expect(JSON.stringify(p.values)).toBe(p.sent);
  });
});
