// A link is "stale" when the host stopped answering for three polls — not when a poll waits longer than its
// budget (a busy laptop) or the first poll of a fresh link waits for the persistent shell to start. Opening the
// demo fleet under load showed "gpu-c stopped answering: no command or scrape answered in the last poll" at
// every open: gpu-c runs only a node-rank-1 unit, so systemctl is all it is asked, and its first answer came
// after the poll's budget. The connection here is a test transport (the monitor's side of SshConnection) whose
// systemctl answers when the test says.
import { expect, it } from 'vitest';
import type { DeploymentConfig } from '../../src/shared/domain';
import { systemClock } from '../../src/main/core/clock';
import { DeploymentMonitor } from '../../src/main/core/monitor/deployment-monitor';
import type { SshConnection } from '../../src/main/core/ssh/connection';

const DEPLOYMENT: DeploymentConfig = {
  id: 'fleet',
  name: 'fleet',
  services: [
    {
      role: 'decode',
      id: 'decode-2',
      hostId: 'gpu-b',
      unit: 'sglang-decode-2.service',
      apiUrl: 'http://10.0.0.3:30202',
      units: [
        { hostId: 'gpu-b', unit: 'sglang-decode-2.service', nodeRank: 0 },
        { hostId: 'gpu-c', unit: 'sglang-decode-2.service', nodeRank: 1 },
      ],
    },
  ],
};

const SHOW = [
  'Id=sglang-decode-2.service',
  'LoadState=loaded',
  'ActiveState=active',
  'SubState=running',
  'MainPID=42',
  'NRestarts=0',
  'Result=success',
  '',
].join('\n');

function slowShell() {
  const marks: string[] = [];
  let answer: (() => void) | undefined;
  const conn = {
    label: 'gpu-c',
    isConnected: true,
    execInShell: () =>
      new Promise((resolve) => {
        answer = () => resolve({ exitCode: 0, stdout: SHOW, stderr: '' });
      }),
    markStale: (reason: string, since: number) => marks.push(`stale: ${reason} since ${since}`),
    markFresh: () => marks.push('fresh'),
  };
  return { conn: conn as unknown as SshConnection, marks, answer: () => answer?.() };
}

it('waits three polls before calling a link stale, and calls it fresh once the host answers', async () => {
  const { conn, marks, answer } = slowShell();
  // The polls' times: each poll a whole interval after the one before.
  const t0 = 1_700_000_000_000;
  let now = t0;
  const clock = { ...systemClock, now: () => now };
  const monitor = new DeploymentMonitor('gpu-c', DEPLOYMENT, conn, { clock, intervalMs: 250 });
  const first = await monitor.pollOnce();
  expect(first.services[0].systemdError).toMatch(/has not answered/);
  expect(marks).toEqual([]);
  // One and two polls unanswered: slow (the first poll of a fresh link, a busy laptop), not yet stale.
  for (let i = 0; i < 2; i++) {
    now += 250;
    await monitor.pollOnce();
    expect(marks).toEqual([]);
  }
  // Three polls: now the host is not answering.
  now += 250;
  await monitor.pollOnce();
  // Silent since the unanswered systemctl went out (nothing ever answered): the time, not a duration frozen
  // into the words ("for 0.8 s" read the same a minute later).
  expect(marks).toEqual([`stale: no command or scrape answered since ${t0}`]);
  answer();
  const third = await monitor.pollOnce();
  expect(third.services[0].systemd?.activeState).toBe('active');
  expect(marks.at(-1)).toBe('fresh');
  monitor.dispose();
});
