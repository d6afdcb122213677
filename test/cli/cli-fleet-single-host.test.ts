// A one-host 1P1D deployment on a real sshd host (test/support/future-host.ts) is a fleet of one: fleet discovery
// follows the router and finds every worker on the same host; `status` prints the one report every deployment
// gets (each service's name, host, url, condition and headline figures, the router, per-role totals, an empty
// unplaced), and its text reads as the three roles, without the columns that tell workers of a role apart.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/main/compose';
import type { DashboardPush, Verdict } from '../../src/shared/contract';
import { serviceId } from '../../src/shared/domain';
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
        const decode = opened.deployment.services.find((d) => d.role === 'decode')!;
        if (s.deploymentId !== opened.deployment.id || !s.families?.[serviceId(decode)]) return;
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

  it('--json is the one report: link, each service with its name, host, url and headline signals, roles, unplaced', async () => {
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
      // The deployment's order, one for every deployment: the router first, then the workers it lists.
      ['router', ALIAS],
      ['prefill', ALIAS],
      ['decode', ALIAS],
    ]);
    for (const s of j.services) expect(s.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(j.services.map((s: { name: string }) => s.name)).toEqual(['router', 'prefill-0', 'decode-0']);
    for (const s of j.services) {
      expect(s.condition.kind, s.name).toBe('serving');
      expect(Object.keys(s.signals).length, s.name).toBeGreaterThan(0);
    }
    expect(j.routers.map((r: { unit: string }) => r.unit)).toEqual([j.services[0].unit]);
    expect(j.hosts.map((h: { id: string }) => h.id)).toEqual([ALIAS]);
    expect(j.unrouted).toEqual([]);
    expect(j.unplaced).toEqual([]);
    expect(j.roles.decode).toMatchObject({ workers: 1, healthy: 1 });
    const decode = j.services.find((s: { role: string }) => s.role === 'decode');
    expect(j.roles.decode.kv).toEqual({
      usedTokens: decode.kv.usedTokens,
      capacityTokens: decode.kv.capacityTokens,
      ratio: decode.kv.ratio,
    });
  }, 60_000);

  it('a status of its own connects to the host once: one login, one discovery, through its app', async () => {
    const before = fh.logins();
    const { code, out, err } = await cliCaptured(['status', '--wait', '0', '--host', ALIAS], {
      sshHome: fh.home,
    });
    expect(err).toBe('');
    expect(code, out).toBe(0);
    const lines = out.split('\n');
    expect(lines[0]).toMatch(new RegExp(`^${ALIAS} — connected`));
    // One of each on one host: a row per role, named by its role, no header and no per-role totals.
    expect(lines.filter((l) => /^\S/.test(l)).map((l) => l.split(' ')[0])).toEqual([
      ALIAS,
      expect.any(String),
      'router',
      'prefill',
      'decode',
      'verdict:',
    ]);
    expect(fh.logins() - before).toBe(1);
  }, 60_000);

  it("ends with the app's shutdown: the deployment closed and every service's disposer run", async () => {
    const stopped: string[] = [];
    const closed: string[] = [];
    const verdicts: Verdict[] = [];
    let own: App | undefined;
    const { code, out } = await cliCaptured(['status', '--json', '--wait', '0', '--host', ALIAS], {
      sshHome: fh.home,
      openApp: (opts) => {
        own = createApp({ ...opts, dataDir: dir });
        own.core.hooks.on('closed', (e) => closed.push(e.deploymentId));
        const getDashboard = own.handlers.getDashboard;
        own.handlers.getDashboard = async (args) => {
          const snapshot = await getDashboard(args);
          verdicts.push(snapshot.verdict);
          return snapshot;
        };
        for (const [name, svc, method] of [
          ['hosts', own.hosts, 'stop'],
          ['dashboard', own.dashboard, 'stop'],
          ['prometheus', own.prometheus, 'dispose'],
          ['recording', own.recording, 'shutdown'],
          ['review', own.review, 'shutdown'],
        ] as const) {
          const target = svc as unknown as Record<string, () => unknown>;
          const original = target[method].bind(svc);
          target[method] = () => (stopped.push(name), original());
        }
        return own;
      },
    });
    expect(code).toBe(0);
    expect(closed).toEqual([ALIAS]);
    // Its verdict is the one the app's dashboard gives the window.
    expect(verdicts).toHaveLength(1);
    expect(JSON.parse(out).verdict).toEqual(verdicts[0]);
    expect(stopped).toEqual(['hosts', 'dashboard', 'prometheus', 'recording', 'review']);
    expect(await own!.core.listDeployments()).toEqual([]);
  }, 60_000);
});
