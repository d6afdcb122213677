// Issue 13 item 6: a scrape with families no era lists still shows everything the console recognises, and the
// unknown families are listed as "not understood by this PD Console version" instead of being dropped. Against
// a real sshd host whose decode server and router serve a real era's families plus future ones
// (test/support/future-host.ts), through the app's SSH client, scraper and parser: `pd-console metrics` (human
// and --json) and the dashboard snapshot the UI reads.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/main/compose';
import type { DashboardPush } from '../../src/shared/contract';
import { serviceId } from '../../src/shared/domain';
import { ALIAS, startFutureHost, sshdUnavailableReason, type FutureHost } from '../support/future-host';
import { FUTURE_ROUTER_UNKNOWN, FUTURE_SERVER_UNKNOWN } from '../signals/future-fixture';
import { cliOnApp } from './run-on-app';

const skip = sshdUnavailableReason();
if (skip) console.warn(`[skipped] unknown metric families against a real sshd host: ${skip}`);

describe.skipIf(skip !== null)('families no supported era lists, from a real SSH host', () => {
  let fh: FutureHost;
  let app: App;
  let dir: string;
  let first: DashboardPush;
  let idOf: (role: string) => string;
  beforeAll(async () => {
    fh = await startFutureHost();
    dir = mkdtempSync(join(tmpdir(), 'pd-cli-unknown-'));
    app = createApp({ shell: 'cli', intervalMs: 500, dataDir: dir, record: false, homeDir: fh.home });
    // Connected and scraped once before the CLI joins: the first poll of a new link (channels, forwards) is the
    // slow one, and on a loaded machine it can miss the scrape deadline the CLI's one observation relies on.
    const opened = await app.handlers.connectHost({ host: fh.host });
    // The snapshot keeps families per service: this host's one service of each role.
    idOf = (role) => serviceId(opened.deployment.services.find((s) => s.role === role)!);
    first = await new Promise<DashboardPush>((resolve, reject) => {
      const t = setTimeout(
        () => reject(new Error('no scrape of prefill, decode and router within 30 s')),
        30_000,
      );
      // Every role, since the snapshot test reads each one's families (a push may carry some roles only).
      const on = (s: DashboardPush): void => {
        if (s.deploymentId !== opened.deployment.id) return;
        if (!['prefill', 'decode', 'router'].every((r) => s.families?.[idOf(r)])) return;
        clearTimeout(t);
        app.core.off('dashboard', on);
        resolve(s);
      };
      app.core.on('dashboard', on);
    });
  }, 60_000);
  afterAll(async () => {
    await app?.shutdown();
    await fh?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('metrics --service decode names the era, lists the unknown families apart, still lists the rest', async () => {
    const r = await cliOnApp(app, ['metrics', '--service', 'decode', '--host', ALIAS]);
    expect(r.err).toBe('');
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain('era: E4 — ');
    expect(r.out).toContain(
      [
        '  2 families not understood by this PD Console version:',
        ...FUTURE_SERVER_UNKNOWN.map((n) => `    ${n}`),
      ].join('\n'),
    );
    expect(r.out).toMatch(/ {2}not used by PD Console: (1 family|\d+ families) \(names with --json\)/);
    expect(r.out).toContain(
      '  other exporters on this endpoint (not SGLang): 6 families (names with --json)',
    );
    // Everything the endpoint serves is still in the family table, recognised or not.
    for (const n of [
      'sglang:num_running_reqs',
      'sglang:kv_used_tokens',
      ...FUTURE_SERVER_UNKNOWN,
      'python_info',
    ])
      expect(r.out).toMatch(new RegExp(`^ {2}${n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} `, 'm'));
  });

  it('metrics --json keeps unknown, not-used and other-exporter names in separate lists', async () => {
    const r = await cliOnApp(app, ['metrics', '--service', 'decode', '--host', ALIAS, '--json']);
    expect(r.code, r.err).toBe(0);
    const j = JSON.parse(r.out) as {
      era: string;
      unknown: string[];
      notUsed: string[];
      otherExporters: string[];
      families: Array<{ name: string }>;
    };
    expect(j.era).toBe('E4');
    expect(j.unknown).toEqual(FUTURE_SERVER_UNKNOWN);
    expect(j.otherExporters).toEqual(expect.arrayContaining(['python_info', 'process_open_fds']));
    expect(j.otherExporters.every((n) => /^(python|process)_/.test(n))).toBe(true);
    for (const n of [...j.unknown, ...j.otherExporters]) expect(j.notUsed).not.toContain(n);
    expect(j.families.map((f) => f.name)).toEqual(expect.arrayContaining(FUTURE_SERVER_UNKNOWN));
  });

  it('the router: its future family is unknown, the era still told', async () => {
    const r = await cliOnApp(app, ['metrics', '--service', 'router', '--host', ALIAS, '--json']);
    expect(r.code, r.err).toBe(0);
    const j = JSON.parse(r.out) as { era: string; unknown: string[] };
    expect(j.era).toBe('smg-engine-metrics');
    expect(j.unknown).toEqual(FUTURE_ROUTER_UNKNOWN);
    const human = await cliOnApp(app, ['metrics', '--service', 'router', '--host', ALIAS]);
    expect(human.out).toContain(
      `  1 family not understood by this PD Console version:\n    ${FUTURE_ROUTER_UNKNOWN[0]}\n`,
    );
  });

  it('the dashboard snapshot carries each role’s unknown names, and the signals it recognises', async () => {
    // The CLI joined the deployment already open on the host rather than opening a second one.
    const open = await app.core.listDeployments();
    expect(open).toHaveLength(1);
    const [d] = open;
    const snap = first;
    expect(snap.families?.[idOf('decode')]?.unknown).toEqual(FUTURE_SERVER_UNKNOWN);
    expect(snap.families?.[idOf('decode')]?.otherExporters).toBe(6);
    expect(snap.families?.[idOf('decode')]?.used).toBeGreaterThan(5);
    expect(snap.families?.[idOf('router')]?.unknown).toEqual(FUTURE_ROUTER_UNKNOWN);
    // prefill is the demo simulation's own E4 server: nothing unknown there.
    expect(snap.families?.[idOf('prefill')]?.unknown).toEqual([]);
    // What the console recognises still reads: the decode queue from the fixture's gauge (in the whole snapshot:
    // a push after the first carries only the values that changed).
    const whole = await app.handlers.getDashboard({ deploymentId: d.deployment.id });
    expect(whole.values['decode.queued']).toBeTypeOf('number');
    expect(whole.families?.[idOf('decode')]?.unknown).toEqual(FUTURE_SERVER_UNKNOWN);
  }, 20_000);
});
