// A one-host 1P1D deployment on a real sshd host (test/support/future-host.ts) stays the classic `status`:
// fleet discovery follows the router, finds every worker on the same host, and hands over; the JSON then also
// carries the fields a fleet status gives (each service's host and url, per-role totals, an empty unplaced).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/main/compose';
import type { DashboardPush } from '../../src/shared/contract';
import { cliCaptured } from './run-on-app';
import { ALIAS, startFutureHost, sshdUnavailableReason, type FutureHost } from '../support/future-host';

const skip = sshdUnavailableReason();
if (skip) console.warn(`[skipped] single-host status against a real sshd host: ${skip}`);

describe.skipIf(skip !== null)('status on a one-host 1P1D deployment', () => {
  let fh: FutureHost;
  let app: App;
  let dir: string;
  beforeAll(async () => {
    fh = await startFutureHost();
    dir = mkdtempSync(join(tmpdir(), 'pd-cli-single-'));
    app = createApp({ shell: 'cli', intervalMs: 500, dataDir: dir, record: false, homeDir: fh.home });
    // Connected and scraped once before the CLI joins (as in cli-unknown-families.test.ts): the first poll of a
    // new link is the slow one, and on a loaded machine it can miss the deadline of the CLI's one observation.
    const opened = await app.handlers.connectHost({ host: fh.host });
    await new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('no scrape of decode within 30 s')), 30_000);
      const on = (s: DashboardPush): void => {
        if (s.deploymentId !== opened.deployment.id || !s.families?.decode) return;
        clearTimeout(t);
        app.core.off('dashboard', on);
        resolve();
      };
      app.core.on('dashboard', on);
    });
  }, 60_000);
  afterAll(async () => {
    await app?.shutdown();
    await fh?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('--json is the classic report (link, headline signals) with host, url, roles and unplaced added', async () => {
    const { code, out, err } = await cliCaptured(['status', '--host', ALIAS, '--json', '--wait', '0'], {
      app,
      sshHome: fh.home,
    });
    expect(err).toBe('');
    expect(code, out).toBe(0);
    const j = JSON.parse(out);
    expect(j.simulated).toBe(false);
    expect(j.link).toBeDefined();
    expect(j.services.map((s: { role: string; host: string }) => [s.role, s.host])).toEqual([
      ['prefill', ALIAS],
      ['decode', ALIAS],
      ['router', ALIAS],
    ]);
    for (const s of j.services) expect(s.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(j.unplaced).toEqual([]);
    expect(j.roles.decode).toMatchObject({ workers: 1, healthy: 1 });
    const decode = j.services.find((s: { role: string }) => s.role === 'decode');
    expect(j.roles.decode.kv).toEqual({
      usedTokens: decode.kv.usedTokens,
      capacityTokens: decode.kv.capacityTokens,
      ratio: decode.kv.ratio,
    });
  }, 60_000);
});
