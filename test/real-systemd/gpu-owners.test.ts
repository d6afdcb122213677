// The roll's GPU check on a real systemd 252 host, over real SSH as an unprivileged user: a worker unit whose
// MainPID (python3) has two children, its process tree read from procps' own `ps`, MainPID from systemd's own
// `systemctl show`. Only nvidia-smi is a stand-in (no GPU here): it prints the compute processes the test
// writes, with real pids. Another unit's process on the worker's GPUs refuses the roll with the worker
// untouched; /proc remounted with hidepid makes the check unreadable rather than wrong.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readPlanGpuOwners } from '../../src/main/core/actions/gpu-owners';
import { unitKey } from '../../src/main/core/actions/gpu-owners';
import { NO_MONITOR } from '../../src/main/core/monitor/scrape-feed';
import { prepareRoll } from '../../src/main/core/actions/roll-session';
import { defaultSettings } from '../../src/main/core/actions/restart-settings';
import { systemClock } from '../../src/main/core/clock';
import { SshConnection } from '../../src/main/core/ssh/connection';
import type { RollWorker } from '../../src/shared/contract';
import { bootRealSystemd, realSystemdUnavailableReason, type RealHost } from './container';

const skip = realSystemdUnavailableReason();
if (skip) console.warn(`[skipped] the roll's GPU check against a real systemd: ${skip}`);

const UNIT = 'sglang-decode-0.service';
/** nvidia-smi --query-compute-apps as the test sets it: the pids it writes to /run/fake-gpu-apps. */
const NVIDIA_SMI = `#!/bin/sh
# Stand-in for nvidia-smi on a host without GPUs: the compute processes the test wrote.
case "$*" in
  *--query-compute-apps*) cat /run/fake-gpu-apps; exit 0 ;;
esac
echo "the stand-in nvidia-smi answers --query-compute-apps only: $*" >&2
exit 2
`;

describe.skipIf(skip !== null)("the roll's GPU check on a real systemd host", () => {
  let host: RealHost;
  let conn: SshConnection;
  let worker: RollWorker;
  const sh = async (command: string): Promise<string> => {
    const r = await host.root(command);
    if (r.code !== 0) throw new Error(`${command}: exit ${r.code}: ${r.stderr}`);
    return r.stdout.trim();
  };
  const mainPid = async (unit: string) => Number(await sh(`systemctl show -p MainPID --value ${unit}`));
  const setApps = (rows: Array<[number, number]>) =>
    sh(
      `printf '%s' '${rows.map(([pid, g]) => `${pid}, GPU-0000000${g}-aaaa-bbbb-cccc-dddddddddddd, 30720\n`).join('')}' > /run/fake-gpu-apps && chmod 644 /run/fake-gpu-apps`,
    );
  const owners = async () =>
    (await readPlanGpuOwners([{ workerId: worker.id }], [worker], new Map([['real', conn]]))).get(
      unitKey(worker.units[0]),
    );

  beforeAll(async () => {
    host = await bootRealSystemd({
      files: {
        [`/etc/systemd/system/${UNIT}`]: [
          '[Unit]',
          'Description=SGLang decode stand-in: a main process with a scheduler child per GPU',
          '[Service]',
          `ExecStart=/usr/bin/python3 -c "import subprocess, time; kids = [subprocess.Popen(['/bin/sleep', '10000' + str(g)]) for g in (0, 1)]; time.sleep(10 ** 6)"`,
          '[Install]',
          'WantedBy=multi-user.target',
          '',
        ].join('\n'),
        '/usr/local/bin/nvidia-smi': { content: NVIDIA_SMI, mode: 0o755 },
      },
      enable: [UNIT],
    });
    const hostKey = Buffer.from(host.hostKeyLine.split(' ')[1], 'base64');
    conn = new SshConnection({
      label: host.hostname,
      configure: async () => ({
        host: host.address,
        port: host.port,
        username: host.user,
        privateKey: readFileSync(host.keyFile),
        hostVerifier: (key: Buffer) => key.equals(hostKey),
      }),
    });
    await conn.start();
    await conn.waitConnected(15_000);
    worker = {
      id: 'http://127.0.0.1:30200',
      name: 'decode-0',
      role: 'decode',
      apiUrl: 'http://127.0.0.1:30200',
      units: [{ hostId: 'real', hostLabel: host.hostname, unit: UNIT, nodeRank: 0, gpus: [0, 1] }],
    };
    // The two children exist before the test reads them.
    await sh(
      `timeout 30 sh -c 'until [ "$(ps -o pid= --ppid "$(systemctl show -p MainPID --value ${UNIT})" | wc -l)" = 2 ]; do sleep 0.1; done'`,
    );
  }, 300_000);
  afterAll(async () => {
    await conn?.stop();
    await host?.stop();
  });

  it("the unit's own children on its GPUs: the check passes, read from real procps and systemd", async () => {
    const main = await mainPid(UNIT);
    const kids = (await sh(`ps -o pid= --ppid ${main}`))
      .split(/\s+/)
      .map(Number)
      .sort((a, b) => a - b);
    expect(kids).toHaveLength(2);
    await setApps([
      [kids[0], 0],
      [kids[1], 1],
    ]);
    expect(await owners()).toEqual({
      kind: 'own',
      detail: `GPUs 0,1 of ${host.hostname} run only processes of ${UNIT} (MainPID ${main} and its 2 descendants): pid ${kids[0]}, ${kids[1]}`,
    });
  });

  it("another unit's process on the GPUs: the plan refuses, and the worker's unit is untouched", async () => {
    await sh(`systemd-run --unit=alice-burn.service /bin/sleep 100099`);
    const foreign = await mainPid('alice-burn.service');
    const main = await mainPid(UNIT);
    const kids = (await sh(`ps -o pid= --ppid ${main}`)).split(/\s+/).map(Number);
    await setApps([
      [kids[0], 0],
      [foreign, 1],
    ]);
    const prepared = await prepareRoll(
      { kind: 'worker', worker: 'decode-0' },
      {
        deploymentId: 'real',
        workers: [worker],
        links: new Map([['real', conn]]),
        hosts: new Map([['real', { id: 'real', label: host.hostname, kind: 'ssh', alias: 'real' }]]),
        clock: systemClock,
        settings: defaultSettings(),
        scrapes: NO_MONITOR,
        pollMs: 200,
        minRealGapMs: 20,
      },
    );
    try {
      expect(prepared.plan.refused).toBe(
        `decode-0: GPUs 0,1 of ${host.hostname} run pid ${foreign} (sleep, 30720 MiB), not a process of ${UNIT} (MainPID ${main} and its 2 descendants): stopping decode-0 would free nothing, so it is not stopped`,
      );
      const end = await prepared.start().done;
      expect(end.failure?.message).toBe(`refused: ${prepared.plan.refused}`);
    } finally {
      prepared.dispose();
    }
    expect(await sh(`systemctl is-active ${UNIT}`)).toBe('active');
    expect(await mainPid(UNIT)).toBe(main);
    await sh('systemctl stop alice-burn.service');
  });

  it('/proc mounted with hidepid: the unit is invisible to the SSH user, so the check says it cannot be read', async () => {
    const main = await mainPid(UNIT);
    const kids = (await sh(`ps -o pid= --ppid ${main}`)).split(/\s+/).map(Number);
    await setApps([[kids[0], 0]]);
    await sh('mount -o remount,hidepid=invisible /proc');
    try {
      expect(await owners()).toEqual({
        kind: 'unreadable',
        detail: `the process table of ${host.hostname} does not show ${UNIT}'s MainPID ${main}: this user cannot see its processes (/proc mounted with hidepid) or it runs in another PID namespace`,
      });
    } finally {
      await sh('mount -o remount,hidepid=off /proc');
    }
  });
});
