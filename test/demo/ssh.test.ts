// The demo host through a real ssh2 client, as the app reaches it: authentication, exec output formats,
// restarts with and without sudo, /metrics over port forwarding, journalctl -f (from a cursor, over several
// units), sh reading commands on stdin, and the connection faults.
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from 'ssh2';
import { acceleratedClock } from '../../src/main/core/clock';
import { startDemoHost, type DemoHost } from '../../src/main/demo';
import { parseExposition } from '../../src/main/core/probes/exposition/parser';
import { connect, exec, forward, httpGet, parseShow, waitFor } from './helpers';

const SPEED = 200;
let host: DemoHost;
let c: Client;

beforeAll(async () => {
  host = await startDemoHost({ clock: acceleratedClock(SPEED), historyMs: 6 * 60_000, seed: 42 });
  c = await connect(host);
});

afterAll(async () => {
  c?.end();
  await host?.stop();
});

describe('authentication', () => {
  it('accepts the generated client key (host key pinned), password "demo", and root', async () => {
    const root = await connect(host, { username: 'root' });
    expect((await exec(root, 'id -u')).stdout).toBe('0\n');
    root.end();
    const pw = await connect(host, { password: 'demo' });
    expect((await exec(pw, 'whoami')).stdout).toBe('operator\n');
    pw.end();
  });

  it('rejects a wrong password, an unknown user and a host key that does not match', async () => {
    await expect(connect(host, { password: 'nope' })).rejects.toThrow(/authentication methods failed/);
    await expect(connect(host, { username: 'mallory' })).rejects.toThrow(/authentication methods failed/);
    await expect(connect({ ...host, hostKeyPublic: Buffer.from('other') })).rejects.toThrow(
      /verification failed/i,
    );
  });
});

describe('exec', () => {
  it('systemctl show: key=value lines, a blank line between units, systemd ExecStart and timestamp formats', async () => {
    const r = await exec(
      c,
      "systemctl show 'sglang-prefill.service' sglang-decode.service sglang-router.service nosuch.service --no-pager " +
        '-p Id,LoadState,ActiveState,SubState,MainPID,NRestarts,Result,ExecMainStatus,ActiveEnterTimestamp,ExecStart,FragmentPath,Environment,EnvironmentFiles,UnitFileState',
    );
    expect(r.code).toBe(0);
    const units = parseShow(r.stdout);
    expect(units).toHaveLength(4);
    expect(r.stdout.split('\n\n')).toHaveLength(4);
    const [p, d, router, missing] = units;
    expect(p).toMatchObject({
      Id: 'sglang-prefill.service',
      LoadState: 'loaded',
      ActiveState: 'active',
      SubState: 'running',
      Result: 'success',
      NRestarts: '0',
      UnitFileState: 'enabled',
    });
    expect(p.ActiveEnterTimestamp).toMatch(
      /^(Sun|Mon|Tue|Wed|Thu|Fri|Sat) \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC$/,
    );
    expect(p.ExecStart).toMatch(
      /^\{ path=\/opt\/sglang\/venv\/bin\/python ; argv\[\]=\/opt\/sglang\/venv\/bin\/python -m sglang\.launch_server .* ; ignore_errors=no ; start_time=\[.+\] ; stop_time=\[n\/a\] ; pid=\d+ ; code=\(null\) ; status=0\/0 \}$/,
    );
    // argv[] as systemd keeps it: variables not expanded, words joined by plain spaces and never quoted.
    expect(p.ExecStart).toContain('--port ${PREFILL_PORT} --disaggregation-mode prefill');
    expect(p.EnvironmentFiles).toBe('/etc/sglang/prefill.env (ignore_errors=no)');
    expect((await exec(c, 'cat -- /etc/sglang/prefill.env')).stdout).toMatch(/^PREFILL_PORT=30100$/m);
    expect(p.ExecStart).toContain('--base-gpu-id 0');
    expect(p.ExecStart).toContain('--enable-metrics');
    expect(d.ExecStart).toContain('--base-gpu-id 4');
    expect(d.ExecStart).toContain('--port 30200');
    expect(router.ExecStart).toContain(
      '--prefill http://127.0.0.1:30100 8998 --decode http://127.0.0.1:30200 --host 0.0.0.0 --port 30001 --prometheus-host 127.0.0.1 --prometheus-port 29001',
    );
    expect(p.Environment).toContain('HF_HUB_OFFLINE=1');
    expect(Number(p.MainPID)).toBeGreaterThan(1);
    expect(missing).toMatchObject({ Id: 'nosuch.service', LoadState: 'not-found', ActiveState: 'inactive' });
  });

  it('is-active, list-units, cat and the small commands answer like the real tools', async () => {
    expect(await exec(c, 'systemctl is-active sglang-decode.service')).toMatchObject({
      stdout: 'active\n',
      code: 0,
    });
    expect(await exec(c, 'systemctl is-active nosuch.service')).toMatchObject({
      stdout: 'inactive\n',
      code: 3,
    });
    const lu = await exec(c, 'systemctl list-units --type=service --all --no-pager --plain --no-legend');
    expect(lu.stdout).toMatch(/^sglang-decode\.service +loaded active running SGLang decode \(PD\)$/m);
    const cat = await exec(c, 'systemctl cat sglang-router.service');
    expect(cat.stdout.split('\n')[0]).toBe('# /etc/systemd/system/sglang-router.service');
    expect(cat.stdout).toMatch(
      /^ExecStart=\/opt\/sglang\/venv\/bin\/python -m sglang_router\.launch_router/m,
    );
    expect(await exec(c, 'systemctl cat nosuch.service')).toMatchObject({
      stderr: 'No files found for nosuch.service.\n',
      code: 1,
    });
    expect((await exec(c, 'id -u; id -un; whoami; hostname')).stdout).toBe(
      '1000\noperator\noperator\nh100-pd-01\n',
    );
    expect((await exec(c, 'uname -a')).stdout).toMatch(/^Linux h100-pd-01 .* x86_64 GNU\/Linux\n$/);
    expect(await exec(c, 'htop')).toMatchObject({ stderr: 'bash: htop: command not found\n', code: 127 });
  });

  it('nvidia-smi csv,noheader,nounits lists 8 H100s with the servers on 0–3 and 4–7', async () => {
    const r = await exec(
      c,
      'nvidia-smi --query-gpu=index,name,uuid,utilization.gpu,memory.used,memory.total,temperature.gpu,power.draw,power.limit --format=csv,noheader,nounits',
    );
    const rows = r.stdout
      .trim()
      .split('\n')
      .map((l) => l.split(', '));
    expect(rows).toHaveLength(8);
    for (const [i, row] of rows.entries()) {
      expect(row[0]).toBe(String(i));
      expect(row[1]).toBe('NVIDIA H100 80GB HBM3');
      expect(row[2]).toMatch(/^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(Number(row[4]) / Number(row[5])).toBeGreaterThan(0.85);
      expect(row[8]).toBe('700.00');
      expect(row[7]).toMatch(/^\d+\.\d{2}$/);
    }
    expect((await exec(c, 'nvidia-smi --query-gpu=bogus --format=csv')).stdout).toBe(
      'Field "bogus" is not a valid field to query.\n\n',
    );
  });
});

describe('what runs: ps, /proc/<pid>/cmdline, ss (the commands discovery reads)', () => {
  const mainPid = async (unit: string): Promise<string> =>
    (await exec(c, `systemctl show -p MainPID --value ${unit}`)).stdout.trim();

  it('ps -e: each unit’s main process runs its ExecStart expanded, SGLang’s children under it, PIDs 7 wide', async () => {
    const pid = await mainPid('sglang-prefill.service');
    const ps = (await exec(c, 'ps -e -o pid=,ppid=,args=')).stdout.split('\n');
    const main = ps.find((l) => l.trim().startsWith(`${pid} `));
    expect(main).toMatch(
      new RegExp(`^ *${pid} +1 /opt/sglang/venv/bin/python -m sglang\\.launch_server .*--port 30100 `),
    );
    expect(main?.indexOf(pid)).toBe(7 - pid.length);
    const children = ps
      .filter((l) => l.split(/\s+/).filter(Boolean)[1] === pid)
      .map((l) => l.trim().split(/\s+/).slice(2).join(' '));
    expect(children).toEqual([
      '/opt/sglang/venv/bin/python -c from multiprocessing.resource_tracker import main;main(37)',
      'sglang::scheduler_TP0',
      'sglang::scheduler_TP1',
      'sglang::scheduler_TP2',
      'sglang::scheduler_TP3',
      'sglang::detokenizer',
    ]);
    expect(ps).toContainEqual(expect.stringMatching(/ps -e -o pid=,ppid=,args=$/));
  });

  it('head -c of /proc/<pid>/cmdline: NUL-separated argv, GNU head’s headers, the missing pid on stderr', async () => {
    const [p, d] = [await mainPid('sglang-prefill.service'), await mainPid('sglang-decode.service')];
    const one = await exec(c, `head -c 262144 -- /proc/${p}/cmdline`);
    expect(one.stdout.split('\0').slice(0, 4)).toEqual([
      '/opt/sglang/venv/bin/python',
      '-m',
      'sglang.launch_server',
      '--model-path',
    ]);
    expect(one.stdout.endsWith('--enable-metrics\0')).toBe(true);
    const many = await exec(
      c,
      `head -c 262144 -- /proc/${p}/cmdline /proc/3999999/cmdline /proc/${d}/cmdline`,
    );
    expect(many.code).toBe(1);
    expect(many.stderr).toBe(
      "head: cannot open '/proc/3999999/cmdline' for reading: No such file or directory\n",
    );
    expect(many.stdout).toMatch(
      new RegExp(`^==> /proc/${p}/cmdline <==\\n[^]*\\0\\n==> /proc/${d}/cmdline <==\\n`),
    );
  });

  it('ss -ltnpH names the owning process to root only, as ss does for another user’s sockets', async () => {
    const pid = await mainPid('sglang-prefill.service');
    const user = (await exec(c, 'ss -ltnpH')).stdout;
    expect(user).toMatch(/^LISTEN 0 +2048 +127\.0\.0\.1:30100 +0\.0\.0\.0:\*$/m);
    expect(user).not.toContain('users:');
    const root = (await exec(c, 'sudo -n ss -ltnpH')).stdout;
    expect(root).toMatch(
      new RegExp(`127\\.0\\.0\\.1:30100 +0\\.0\\.0\\.0:\\* users:\\(\\("python",pid=${pid},fd=\\d+\\)\\)`),
    );
    expect(root).toMatch(/0\.0\.0\.0:22 +0\.0\.0\.0:\* users:\(\("sshd",pid=\d+,fd=3\)\)/);
  });
});

describe('restart', () => {
  it('without sudo it is refused the way polkit refuses a non-interactive session', async () => {
    const r = await exec(c, 'systemctl restart sglang-decode.service');
    expect(r).toMatchObject({
      code: 4,
      stderr: 'Failed to restart sglang-decode.service: Interactive authentication required.\n',
    });
  });

  it('sudo -n systemctl restart blocks until the unit is active again — at once, before the model loads (Type=simple); the PID changes, NRestarts does not', async () => {
    const before = parseShow((await exec(c, 'systemctl show sglang-prefill -p MainPID,NRestarts')).stdout)[0];
    const r = await exec(c, 'sudo -n systemctl restart sglang-prefill.service');
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const after = parseShow(
      (await exec(c, 'systemctl show sglang-prefill -p MainPID,NRestarts,ActiveState')).stdout,
    )[0];
    expect(after.ActiveState).toBe('active');
    expect(after.MainPID).not.toBe(before.MainPID);
    expect(after.NRestarts).toBe(before.NRestarts);
    const log = await exec(c, `journalctl -u sglang-prefill.service -o cat --no-pager --since '-3min'`);
    expect(log.stdout).toMatch(
      /^Stopping sglang-prefill\.service - SGLang prefill \(PD\)\.\.\.\n(.*\n)*sglang-prefill\.service: Deactivated successfully\.\nStopped sglang-prefill\.service - SGLang prefill \(PD\)\.\n(.*\n)?Started sglang-prefill\.service - SGLang prefill \(PD\)\.\n/m,
    );
    // systemd says started; the model has not loaded: that is for the journal and /health to tell.
    expect(log.stdout).not.toMatch(/The server is fired up and ready to roll!/);
  });

  it('the sudo-password fault makes sudo -n fail', async () => {
    host.sim.setFault('sudo-password', true);
    try {
      expect(await exec(c, 'sudo -n systemctl restart sglang-decode.service')).toMatchObject({
        code: 1,
        stderr: 'sudo: a password is required\n',
      });
    } finally {
      host.sim.setFault('sudo-password', false);
    }
  });
});

describe('port forwarding', () => {
  it('serves /metrics on the server ports and the router metrics port; other ports are refused', async () => {
    for (const port of [30100, 30200, 29001]) {
      const r = await httpGet(c, port, '/metrics');
      expect(r.status).toBe(200);
      expect(parseExposition(r.body, 'prometheus').sampleCount).toBeGreaterThan(10);
    }
    expect((await httpGet(c, 30001, '/readiness')).status).toBe(200);
    await expect(forward(c, 8998)).rejects.toThrow(/Channel open failure/);
    await expect(forward(c, 22)).rejects.toThrow(/Channel open failure/);
  });

  it("gzips an SGLang server's /metrics for a request that accepts it, as prometheus_client does; the router never", async () => {
    for (const port of [30100, 30200]) {
      const plain = await httpGet(c, port, '/metrics');
      expect(plain.headers['content-encoding']).toBeUndefined();
      const gz = await httpGet(c, port, '/metrics', 5000, '127.0.0.1', {
        'accept-encoding': 'deflate, gzip;q=0.5',
      });
      expect(gz.headers['content-encoding']).toBe('gzip');
      expect(gz.bytes.length).toBeLessThan(plain.bytes.length / 5);
      const text = gunzipSync(gz.bytes).toString('utf8');
      // The same families as the plain answer (values move between the two scrapes).
      const names = (t: string) => parseExposition(t, 'prometheus').families.map((f) => f.name);
      expect(names(text)).toEqual(names(plain.body));
    }
    const router = await httpGet(c, 29001, '/metrics', 5000, '127.0.0.1', { 'accept-encoding': 'gzip' });
    expect(router.headers['content-encoding']).toBeUndefined();
    expect(parseExposition(router.body, 'prometheus').sampleCount).toBeGreaterThan(10);
  });

  it('the decode port is refused while decode restarts, then serves again', async () => {
    expect((await exec(c, 'sudo -n systemctl restart --no-block sglang-decode.service')).code).toBe(0);
    await waitFor(
      () =>
        forward(c, 30200).then(
          (ch) => (ch.destroy(), false),
          () => true,
        ),
      3000,
      'the decode port to close',
    );
    await waitFor(
      () =>
        httpGet(c, 30200, '/health').then(
          (r) => r.status === 200,
          () => false,
        ),
      5000,
      'decode /health to answer 200',
    );
  });
});

describe('journalctl -f', () => {
  it('streams new entries until the channel closes, then detaches', async () => {
    const seen: string[] = [];
    const channel = await new Promise<import('ssh2').ClientChannel>((resolve, reject) =>
      c.exec(
        'journalctl -u sglang-router.service -u sglang-decode.service -f -o json --no-pager',
        (err, s) => (err ? reject(err) : resolve(s)),
      ),
    );
    let buf = '';
    channel.on('data', (d: Buffer) => {
      buf += d.toString();
      const lines = buf.split('\n');
      buf = lines.pop() ?? '';
      for (const l of lines) seen.push((JSON.parse(l) as { MESSAGE: string }).MESSAGE);
    });
    await waitFor(() => seen.length >= 10, 3000, 'the initial 10 lines');
    expect(host.sim.journal.followers).toBe(1);
    await exec(c, 'sudo -n systemctl restart --no-block sglang-router.service');
    await waitFor(
      () => seen.some((m) => m === 'Started sglang-router.service - SGLang router (PD).'),
      3000,
      'the router restart in the stream',
    );
    expect(seen).toContain('Stopping sglang-router.service - SGLang router (PD)...');
    channel.close();
    await waitFor(() => host.sim.journal.followers === 0, 3000, 'the follower to detach');
  });
});

describe('journalctl --follow from a cursor, over several units', () => {
  /** Starts a streaming command; returns the MESSAGE/cursor of every JSON line it prints, and the channel. */
  async function follow(command: string) {
    const entries: Array<{ message: string; cursor: string; unit: string }> = [];
    const channel = await new Promise<import('ssh2').ClientChannel>((resolve, reject) =>
      c.exec(command, (err, s) => (err ? reject(err) : resolve(s))),
    );
    let buf = '';
    channel.on('data', (d: Buffer) => {
      buf += d.toString();
      const lines = buf.split('\n');
      buf = lines.pop() ?? '';
      for (const l of lines) {
        const o = JSON.parse(l) as Record<string, string>;
        entries.push({ message: o.MESSAGE, cursor: o.__CURSOR, unit: o._SYSTEMD_UNIT ?? o.UNIT });
      }
    });
    return { entries, channel };
  }

  it('prints every entry after the cursor (not only -n of them), then follows, for each -u', async () => {
    const before = await exec(c, 'journalctl --no-pager -o json -n 1');
    const cursor = (JSON.parse(before.stdout) as { __CURSOR: string }).__CURSOR;
    for (let i = 1; i <= 15; i++) host.sim.log(i % 2 ? 'decode' : 'prefill', `follow-test ${i}`);
    const f = await follow(
      `journalctl --no-pager -o json --follow -u sglang-prefill.service -u sglang-decode.service --after-cursor '${cursor}' -n 3`,
    );
    const ours = (): string[] =>
      f.entries.filter((e) => e.message.startsWith('follow-test')).map((e) => e.message);
    // journalctl-show.c: with --follow the loop does not stop at -n; from a cursor it shows all that follows.
    await waitFor(() => ours().length >= 15, 3000, 'the 15 entries after the cursor');
    host.sim.log('decode', 'follow-test 16');
    host.sim.log('router', 'follow-test router, not followed');
    await waitFor(() => ours().length >= 16, 3000, 'the entry logged while following');
    expect(ours()).toEqual(Array.from({ length: 16 }, (_, i) => `follow-test ${i + 1}`));
    expect(new Set(f.entries.map((e) => e.unit))).toEqual(
      new Set(['sglang-prefill.service', 'sglang-decode.service']),
    );
    f.channel.close();
    await waitFor(() => host.sim.journal.followers === 0, 3000, 'the follower to detach');
  });

  it('--lines=all with --follow prints the whole history of the units first', async () => {
    const all = await exec(c, 'journalctl --no-pager -o json -u sglang-router.service');
    const count = all.stdout.trim().split('\n').length;
    const f = await follow('journalctl --no-pager -o json --follow -u sglang-router.service --lines=all');
    await waitFor(() => f.entries.length >= count, 5000, 'the whole router history');
    expect(f.entries[0].cursor).toBe(
      (JSON.parse(all.stdout.split('\n')[0]) as { __CURSOR: string }).__CURSOR,
    );
    f.channel.close();
    await waitFor(() => host.sim.journal.followers === 0, 3000, 'the follower to detach');
  });
});

describe('sh reading commands on stdin (the persistent shell)', () => {
  it('runs each line as it arrives, with $?, >&2 and </dev/null, and exits at the end of input', async () => {
    const channel = await new Promise<import('ssh2').ClientChannel>((resolve, reject) =>
      c.exec('sh', (err, s) => (err ? reject(err) : resolve(s))),
    );
    let out = '';
    let err = '';
    channel.on('data', (d: Buffer) => (out += d.toString()));
    channel.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const exited = new Promise<number>((resolve) => channel.on('exit', (code: number) => resolve(code)));
    channel.write(
      `"\${SHELL:=/bin/sh}" -c 'systemctl is-active sglang-decode.service' "\${SHELL##*/}" </dev/null; echo "T1 $?"; echo T1 >&2\n`,
    );
    await waitFor(() => out.includes('T1 0\n') && err.includes('T1\n'), 3000, 'the first answer');
    expect(out).toBe('active\nT1 0\n');
    expect(err).toBe('T1\n');
    // The second command arrives only after the first was answered: the shell was waiting on stdin.
    channel.write(`"\${SHELL:=/bin/sh}" -c 'nosuch' "\${SHELL##*/}" </dev/null; echo "T2 $?"; echo T2 >&2\n`);
    await waitFor(() => out.includes('T2 127\n') && err.includes('T2\n'), 3000, 'the second answer');
    expect(err).toBe('T1\nbash: nosuch: command not found\nT2\n');
    channel.end();
    expect(await exited).toBe(0);
  });
});

describe('malformed output faults', () => {
  it('malformed-journal adds invalid UTF-8 and a 1 MB line', async () => {
    host.sim.setFault('malformed-journal', true);
    try {
      const r = await exec(c, 'journalctl -u sglang-decode.service -n 500 -o cat');
      expect(r.raw.includes(Buffer.from([0xff, 0xfe]))).toBe(true);
      expect(Math.max(...r.stdout.split('\n').map((l) => l.length))).toBeGreaterThanOrEqual(1024 * 1024);
      const j = await exec(c, 'journalctl -u sglang-decode.service -n 500 -o json');
      expect(j.stdout).toMatch(/"MESSAGE":\[\d+(,\d+)+\]/);
      expect(j.stdout).toMatch(/"MESSAGE":null/);
    } finally {
      host.sim.setFault('malformed-journal', false);
    }
  });

  it('malformed-systemctl and malformed-nvidia-smi garble their output', async () => {
    host.sim.setFault('malformed-systemctl', true);
    host.sim.setFault('malformed-nvidia-smi', true);
    try {
      const s = await exec(c, 'systemctl show sglang-decode.service');
      expect(s.stdout).toMatch(/^NRestarts=several$/m);
      expect(s.stdout.split('\n').some((l) => l && !l.includes('='))).toBe(true);
      const n = await exec(c, 'nvidia-smi --query-gpu=index,memory.used --format=csv,noheader,nounits');
      expect(n.stdout).toContain('[Unknown Error]');
      expect(n.stdout).toContain('[N/A]');
    } finally {
      host.sim.setFault('malformed-systemctl', false);
      host.sim.setFault('malformed-nvidia-smi', false);
    }
  });
});

describe('connection faults', () => {
  it('dropConnections cuts every connection; a new one is accepted at once', async () => {
    const victim = await connect(host);
    const closed = new Promise<void>((resolve) => victim.once('close', () => resolve()));
    victim.on('error', () => undefined);
    host.sim.dropConnections();
    await closed;
    const again = await connect(host);
    expect((await exec(again, 'hostname')).stdout).toBe('h100-pd-01\n');
    again.end();
  });

  it('link-down blackholes the path: an open connection goes silent, a new one gets no handshake; both answer again after', async () => {
    const open = await connect(host);
    open.on('error', () => undefined);
    host.sim.setFault('link-down', true);
    try {
      // Silence cannot be waited for as an event: the exec is given half a second to (wrongly) answer.
      const pending = exec(open, 'hostname');
      const early = await Promise.race([
        pending.then(() => 'answered'),
        new Promise((r) => setTimeout(() => r('silent'), 500)),
      ]);
      expect(early).toBe('silent');
      const fresh = new Client();
      fresh.on('error', () => undefined);
      const handshake = new Promise<string>((resolve) => {
        fresh.once('ready', () => resolve('ready'));
        fresh.once('error', (e: Error) => resolve(e.message));
      });
      fresh.connect({
        host: host.host,
        port: host.port,
        username: host.username,
        privateKey: host.clientPrivateKey,
        hostVerifier: (key: Buffer) => key.equals(host.hostKeyPublic),
        readyTimeout: 700,
      });
      expect(await handshake).toMatch(/timed out/i);
      fresh.end();
      host.sim.setFault('link-down', false);
      // What was asked during the outage is answered once the path carries traffic again.
      expect((await pending).stdout).toBe('h100-pd-01\n');
      const again = await connect(host);
      expect((await exec(again, 'hostname')).stdout).toBe('h100-pd-01\n');
      again.end();
    } finally {
      host.sim.setFault('link-down', false);
      open.end();
    }
  });

  it('reboot drops connections, refuses new ones while down, then accepts again with a new boot', async () => {
    const victim = await connect(host);
    victim.on('error', () => undefined);
    const closed = new Promise<void>((resolve) => victim.once('close', () => resolve()));
    const bootBefore = host.sim.bootId;
    host.sim.reboot(60_000);
    await closed;
    await expect(connect(host)).rejects.toThrow(/ECONNREFUSED|closed|reset/i);
    const back = await waitFor(
      () =>
        connect(host).then(
          (cl) => cl,
          () => null,
        ),
      5000,
      'ssh to come back',
    );
    expect(host.sim.bootId).not.toBe(bootBefore);
    const st = await exec(back, 'systemctl show sglang-decode -p NRestarts,ActiveState');
    expect(parseShow(st.stdout)[0].NRestarts).toBe('0');
    back.end();
    c = await connect(host);
  });
});
