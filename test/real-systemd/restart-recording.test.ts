// A restart and a recording against a real systemd 252: the app connects over SSH as an unprivileged user with
// sudo, restarts decode (systemd's own job, a new MainPID), follows it to healthy, and the session's recording
// holds the journal as journald gave it (the 5 KB start-up line whole, its API key removed) and the restart.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/main/compose';
import { readRecording } from '../../src/main/core/recording';
import { realSystemdUnavailableReason } from './container';
import {
  API_KEY,
  bootRealDeployment,
  cliOn,
  PORTS,
  realHost1P1D,
  waitListening,
  type RealDeployment,
} from './scenario';

const skip = realSystemdUnavailableReason();
if (skip) console.warn(`[skipped] restart and recording against a real systemd: ${skip}`);

describe.skipIf(skip !== null)('restart and recording on a real systemd host', () => {
  let d: RealDeployment;
  beforeAll(async () => {
    d = await bootRealDeployment((a) => realHost1P1D(a, { 'dsv4-decode.service': { loadSeconds: 3 } }));
    await waitListening(d.host, [PORTS.prefill, PORTS.decode, PORTS.router]);
  }, 300_000);
  afterAll(async () => d?.stop());

  it('pd-console restart decode: systemd restarts it (a new MainPID) and the run ends healthy at the router', async () => {
    const pidOf = async (): Promise<string> =>
      (await d.host.root('systemctl show -p MainPID --value dsv4-decode.service')).stdout.trim();
    const before = await pidOf();
    const r = await cliOn(d, ['restart', 'decode', '--host', d.alias, '--yes']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/decode restarted in \d+ s/);
    expect(r.stdout).toContain('the router reports http://');
    const after = await pidOf();
    expect(after).not.toBe(before);
    expect(Number(after)).toBeGreaterThan(0);
    // systemd's own record of it: one restart job, started by the SSH user through sudo.
    const journal = (await d.host.root('journalctl -u dsv4-decode.service -o cat --no-pager')).stdout;
    expect(journal).toContain('Stopping dsv4-decode.service');
    expect(journal.match(/Started dsv4-decode.service/g)?.length).toBe(2);
  }, 120_000);

  it('records the session: journal lines as journald gave them, secrets removed, the restart on the timeline', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'pd-real-rec-'));
    let app: App | undefined;
    try {
      process.env.PD_CONSOLE_SSH_HOME = d.sshHome;
      app = createApp({ shell: 'cli', intervalMs: 1000, record: true, dataDir, homeDir: d.sshHome });
      const { deployment } = await app.core.connectHost({
        host: { id: d.alias, label: d.alias, kind: 'ssh', alias: d.alias } as never,
      });
      const { operation } = await app.handlers.startRestart({
        deploymentId: deployment.id,
        target: 'decode',
      });
      const end = await new Promise<{ state: string }>((resolve) => {
        const on = (e: { id: string; state: string }): void => {
          if (e.id === operation.id && (e.state === 'succeeded' || e.state === 'failed')) {
            app?.core.off('restartProgress', on as never);
            resolve(e);
          }
        };
        app?.core.on('restartProgress', on as never);
      });
      expect(end.state).toBe('succeeded');
      const sessionId = app.recording.status().active[0]?.sessionId;
      expect(sessionId).toBeTruthy();
      await app.core.closeDeployment({ deploymentId: deployment.id });
      await app.recording.shutdown();
      const rec = await readRecording(app.recording.store.pathOf(sessionId!));
      const decode = rec.journal.filter((j) => j.unit === 'dsv4-decode.service');
      const serverArgs = decode.find((j) => j.message.includes('server_args=ServerArgs('));
      expect(serverArgs?.message.length).toBeGreaterThan(4096);
      expect(JSON.stringify(rec.journal)).not.toContain(API_KEY);
      expect(decode.some((j) => /fired up and ready to roll/.test(j.message))).toBe(true);
      expect(rec.events.some((e) => /restart/i.test(e.title) && /decode/.test(e.title))).toBe(true);
    } finally {
      delete process.env.PD_CONSOLE_SSH_HOME;
      await app?.shutdown();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 180_000);

  it('a unit systemd stopped restarting (start limit) is refused at once, with the reset-failed that lifts it', async () => {
    // Decode now fails at every start; its drop-in allows 3 starts in 10 minutes, as operators set it so a crash
    // loop stops. Once systemd gives up, a new start is refused without the unit changing at all.
    const unit = 'dsv4-decode.service';
    const behaviour = `/etc/pd-sim/units.json`;
    await d.host.root(
      [
        `mkdir -p /etc/systemd/system/${unit}.d`,
        `printf '[Unit]\\nStartLimitIntervalSec=600\\nStartLimitBurst=3\\n' > /etc/systemd/system/${unit}.d/limit.conf`,
        `python3 -c "import json;p='${behaviour}';b=json.load(open(p));b['${unit}']={'failWith':'ImportError: libcuda.so.1'};json.dump(b,open(p,'w'))"`,
        'systemctl daemon-reload',
        `systemctl restart ${unit} || true`,
      ].join(' && '),
    );
    const gaveUp = await d.host.root(
      `timeout 60 sh -c "until systemctl is-failed -q ${unit} && journalctl -u ${unit} -o cat | grep -q 'Start request repeated too quickly'; do sleep 0.2; done"`,
    );
    expect(gaveUp.code).toBe(0);
    // The status says so, though systemd's own Result still reads exit-code.
    const status = await cliOn(d, ['status', '--host', d.alias]);
    const decodeLine = status.stdout.split('\n').find((l) => l.startsWith('decode'));
    expect(decodeLine).toContain('systemd gave up after');
    expect(decodeLine).toContain('(start limit)');
    const r = await cliOn(d, ['restart', 'decode', '--host', d.alias, '--yes']);
    expect(r.code).not.toBe(0);
    expect(r.stdout + r.stderr).toMatch(
      /systemd refused to start dsv4-decode\.service: it was started too often/,
    );
    expect(r.stdout + r.stderr).toContain(`sudo systemctl reset-failed ${unit}`);
    // What the hint says lifts it does: reset-failed, then the same restart serves again.
    await d.host.root(
      `python3 -c "import json;p='${behaviour}';b=json.load(open(p));b['${unit}']={'loadSeconds':1};json.dump(b,open(p,'w'))" && systemctl reset-failed ${unit}`,
    );
    const again = await cliOn(d, ['restart', 'decode', '--host', d.alias, '--yes']);
    expect(again.code).toBe(0);
  }, 150_000);
});
