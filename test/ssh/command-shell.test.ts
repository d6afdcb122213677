// The persistent shell that carries the monitor's periodic commands: its framing against a real /bin/sh (the
// answer of each command is exactly what exec gives: stdout and stderr byte for byte, with or without a final
// newline, the exit status, stdin closed), against a real OpenSSH sshd running the login shell, and what it does
// when the shell misbehaves: every such case still answers the command, over exec, and says why.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConnectConfig } from 'ssh2';
import { CommandShell } from '../../src/main/core/ssh/command-shell';
import type { CommandStream, ExecResult, StreamHandlers } from '../../src/main/core/ssh/connection';
import { SshConnection } from '../../src/main/core/ssh/connection';
import { httpGet } from '../../src/main/core/ssh/http-agent';
import { sshdUnavailableReason, startSshd, type Sshd } from '../fixtures/sshd';
import { makeHome, type TestHome } from './sshd-helpers';

/** What exec gives for a command: sshd has the login shell ($SHELL, named by its basename) run it with -c. */
function realExec(command: string, env: NodeJS.ProcessEnv = process.env): Promise<ExecResult> {
  const shell = env.SHELL || '/bin/sh';
  const child = spawn(shell, ['-c', command], {
    env,
    argv0: shell.slice(shell.lastIndexOf('/') + 1),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on('data', (d: Buffer) => out.push(d));
  child.stderr.on('data', (d: Buffer) => err.push(d));
  return new Promise((resolve) =>
    child.on('close', (code) =>
      resolve({
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        exitCode: code,
      }),
    ),
  );
}

/** A local /bin/sh reading stdin, as the remote `sh` of the shell channel. */
function localSh(opened: { count: number }, env: NodeJS.ProcessEnv = process.env) {
  return async (command: string, h: StreamHandlers): Promise<CommandStream> => {
    expect(command).toBe('sh');
    opened.count++;
    const child = spawn('/bin/sh', [], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    child.stdout.on('data', (d: Buffer) => h.stdout(d));
    child.stderr.on('data', (d: Buffer) => h.stderr(d));
    child.on('close', (code, signal) => h.closed(code, signal));
    return {
      write: (data) => void child.stdin.write(data),
      close: () => void child.kill('SIGTERM'),
    };
  };
}

const CASES = [
  'echo hello',
  "printf 'no newline at the end'",
  "printf 'a\\nb\\n\\n'",
  'echo to stderr >&2; echo to stdout',
  "printf 'err without newline' >&2",
  'exit 7',
  'false',
  'nosuch-command-here',
  "printf '\\377\\376 not utf-8'",
  "printf '%s' '__pdc_lookalike_1 0'",
  'seq 1 20000',
];

/** The environment as it is, and without $SHELL (sshd always sets it; a CI runner's own shell may not). */
const ENVS: [string, NodeJS.ProcessEnv][] = [
  [`SHELL=${process.env.SHELL ?? '(unset)'}`, process.env],
  ['SHELL unset', Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'SHELL'))],
];

describe('CommandShell against a real /bin/sh', () => {
  it.each(ENVS)('answers every command exactly as exec does, through one shell (%s)', async (_name, env) => {
    const opened = { count: 0 };
    const execs: string[] = [];
    const exec = (c: string) => realExec(c, env);
    const shell = new CommandShell({
      label: 'local',
      open: localSh(opened, env),
      exec: (c) => (execs.push(c), exec(c)),
      isConnected: () => true,
    });
    for (const c of CASES) expect(await shell.run(c), c).toEqual(await exec(c));
    // Several at once queue up and come back in order.
    const many = await Promise.all(CASES.map((c) => shell.run(c)));
    expect(many).toEqual(await Promise.all(CASES.map(exec)));
    // A command that reads stdin sees it closed, not the shell's next commands.
    expect(await shell.run('cat; echo after cat')).toEqual({
      stdout: 'after cat\n',
      stderr: '',
      exitCode: 0,
    });
    expect(opened.count).toBe(1);
    expect(execs).toEqual([]);
    expect(shell.stats).toMatchObject({ shells: 1, viaShell: CASES.length * 2 + 1, viaExec: 0 });
    shell.close();
  });

  it('a command that outlives its timeout fails as exec would, and the next one gets a fresh shell', async () => {
    const opened = { count: 0 };
    const shell = new CommandShell({
      label: 'local',
      open: localSh(opened),
      exec: (c) => realExec(c),
      isConnected: () => true,
    });
    await expect(shell.run('sleep 5', { timeoutMs: 200 })).rejects.toMatchObject({
      explained: { code: 'exec-timeout' },
    });
    expect(await shell.run('echo next')).toEqual({ stdout: 'next\n', stderr: '', exitCode: 0 });
    expect(opened.count).toBe(2);
    expect(shell.stats.viaExec).toBe(0);
    shell.close();
  });

  it('output past the cap fails the command as exec would, without reading on', async () => {
    const shell = new CommandShell({
      label: 'local',
      open: localSh({ count: 0 }),
      exec: (c) => realExec(c),
      isConnected: () => true,
    });
    await expect(shell.run('seq 1 100000', { maxBytes: 10_000 })).rejects.toMatchObject({
      explained: { code: 'output-too-large' },
    });
    expect((await shell.run('echo still fine')).stdout).toBe('still fine\n');
    shell.close();
  });
});

/** A shell channel whose output the test writes itself, chunk by chunk. */
function scripted(): {
  open: (command: string, h: StreamHandlers) => Promise<CommandStream>;
  written: string[];
  handlers: () => StreamHandlers;
  opened: number;
} {
  let h: StreamHandlers | null = null;
  const state = {
    written: [] as string[],
    opened: 0,
    handlers: () => h!,
    open: async (_command: string, handlers: StreamHandlers): Promise<CommandStream> => {
      h = handlers;
      state.opened++;
      return { write: (d) => void state.written.push(d), close: () => undefined };
    },
  };
  return state;
}

const tokenOf = (line: string): string => /echo "(\S+) \$\?"/.exec(line)![1];
const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('CommandShell framing and trouble', () => {
  it('reassembles answers cut anywhere, even inside the token', async () => {
    const s = scripted();
    const shell = new CommandShell({
      label: 'x',
      open: s.open,
      exec: (c) => realExec(c),
      isConnected: () => true,
    });
    const answer = shell.run('whatever');
    await tick();
    const token = tokenOf(s.written[0]);
    expect(s.written[0]).toBe(
      `"\${SHELL:=/bin/sh}" -c whatever "\${SHELL##*/}" </dev/null; echo "${token} $?"; echo ${token} >&2\n`,
    );
    const out = Buffer.from(`line one\nno end${token} 3\n`);
    const err = Buffer.from(`warn${token}\n`);
    for (let i = 0; i < out.length; i++) s.handlers().stdout(out.subarray(i, i + 1));
    for (let i = 0; i < err.length; i += 3) s.handlers().stderr(err.subarray(i, i + 3));
    expect(await answer).toEqual({ stdout: 'line one\nno end', stderr: 'warn', exitCode: 3 });
  });

  it('a shell that dies during a command: the command is answered over exec, and exec is used for a while', async () => {
    const s = scripted();
    const execs: string[] = [];
    const shell = new CommandShell({
      label: 'gpu-1',
      open: s.open,
      exec: async (c) => (execs.push(c), { stdout: 'via exec\n', stderr: '', exitCode: 0 }),
      isConnected: () => true,
    });
    const answer = shell.run('systemctl show x');
    await tick();
    s.handlers().closed(127, null);
    expect(await answer).toEqual({ stdout: 'via exec\n', stderr: '', exitCode: 0 });
    expect(shell.stats.lastTrouble).toBe('the shell exited (exit code 127) during a command');
    expect(await shell.run('nvidia-smi')).toMatchObject({ stdout: 'via exec\n' });
    expect(execs).toEqual(['systemctl show x', 'nvidia-smi']);
    expect(s.opened).toBe(1);
  });

  it('output that does not fit the framing is trouble, not an answer', async () => {
    const s = scripted();
    const shell = new CommandShell({
      label: 'x',
      open: s.open,
      exec: async () => ({ stdout: 'exec answer', stderr: '', exitCode: 0 }),
      isConnected: () => true,
    });
    const answer = shell.run('echo hi');
    await tick();
    const token = tokenOf(s.written[0]);
    s.handlers().stdout(Buffer.from(`hi\n${token} 0\nextra after the status\n`));
    expect((await answer).stdout).toBe('exec answer');
    expect(shell.stats.lastTrouble).toMatch(/did not end with its status line/);
  });

  it('a shell lost with the link is not given up on: the command gets exec’s own answer, the next a new shell', async () => {
    const s = scripted();
    let connected = true;
    const shell = new CommandShell({
      label: 'x',
      open: s.open,
      exec: async () => {
        throw new Error('not connected to x');
      },
      isConnected: () => connected,
    });
    const answer = shell.run('echo hi');
    await tick();
    connected = false;
    s.handlers().closed(null, null);
    await expect(answer).rejects.toThrow('not connected to x');
    expect(shell.stats.lastTrouble).toBeUndefined();
    connected = true;
    const next = shell.run('echo again');
    await tick();
    expect(s.opened).toBe(2);
    const token = tokenOf(s.written.at(-1)!);
    s.handlers().stdout(Buffer.from(`again\n${token} 0\n`));
    s.handlers().stderr(Buffer.from(`${token}\n`));
    expect(await next).toEqual({ stdout: 'again\n', stderr: '', exitCode: 0 });
  });
});

const skip = sshdUnavailableReason();
if (skip) console.warn(`[skipped] persistent shell against a real sshd: ${skip}`);

describe.skipIf(skip !== null)('the persistent shell over a real OpenSSH sshd and the login shell', () => {
  let h: TestHome;
  let sshd: Sshd;
  beforeAll(async () => {
    h = await makeHome();
    sshd = await startSshd({
      answer: async () => ({ stdout: '', exitCode: 255 }),
      authorizedKeys: [h.keys.user.publicLine],
      bridge: false,
    });
  });
  afterAll(async () => {
    await sshd?.stop();
    await h?.cleanup();
  });

  /** The ssh2 config that logs in to the test's sshd. */
  const toSshd = async (): Promise<ConnectConfig> => ({
    host: '127.0.0.1',
    port: sshd.port,
    username: process.env.USER ?? 'root',
    privateKey: readFileSync(h.keys.user.privateFile),
    hostVerifier: () => true,
  });

  it('gives the same answers as exec over one session channel', async () => {
    const conn = new SshConnection({
      label: 'real sshd',
      configure: toSshd,
    });
    await conn.start();
    await conn.waitConnected(10_000);
    try {
      for (const c of CASES) expect(await conn.execInShell(c), c).toEqual(await conn.exec(c));
      // (exec would wait for the channel's stdin here: the shell closes it, like `ssh -n`.)
      expect(await conn.execInShell('cat; echo after cat')).toEqual({
        stdout: 'after cat\n',
        stderr: '',
        exitCode: 0,
      });
      expect(conn.shellStats).toMatchObject({ shells: 1, viaShell: CASES.length + 1, viaExec: 0 });
    } finally {
      await conn.stop();
    }
  });

  it('a slow command does not hold back the next read, and the spare shell stays within the channel budget', async () => {
    // Three channels for a journal follow, a kept-alive HTTP tunnel and the shell: the spare shell the
    // waiting read needs can only come from the tunnel nobody is using, which the budget takes back.
    const http = await import('node:http');
    const server = http.createServer((_req, res) => res.end('ok'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    const gate = join(h.root, `gate-${process.pid}`);
    const conn = new SshConnection({
      label: 'real sshd',
      maxChannels: 3,
      spareShellAfterMs: 200,
      spareShellIdleMs: 60_000,
      configure: toSshd,
    });
    await conn.start();
    await conn.waitConnected(10_000);
    try {
      const follow = await conn.openStream('sleep 600', {
        stdout: () => undefined,
        stderr: () => undefined,
        closed: () => undefined,
      });
      const get = (): Promise<string> =>
        httpGet(conn.httpAgent(), `http://127.0.0.1:${port}/`).then((r) => r.body);
      expect(await get()).toBe('ok');
      expect(await conn.execInShell('echo warm')).toMatchObject({ stdout: 'warm\n' });
      expect(conn.channelStats).toMatchObject({ open: 3, limit: 3 });

      const answered: string[] = [];
      // Blocks until the test opens the gate, which it does only once the poll behind it was answered.
      const slow = conn
        .execInShell(`while [ ! -e '${gate}' ]; do sleep 0.05; done; echo slow`, { timeoutMs: 120_000 })
        .then((r) => void answered.push(r.stdout.trim()));
      const poll = await conn.execInShell('echo poll');
      answered.push(poll.stdout.trim());
      expect(answered, 'the poll was answered while the slow command still ran').toEqual(['poll']);
      await writeFile(gate, '');
      await slow;
      expect(answered).toEqual(['poll', 'slow']);
      // The tunnel was taken back for the spare shell; the next scrape opens it again, taking back the idle spare.
      expect(await get()).toBe('ok');
      expect(conn.channelStats.max, 'channels open at once').toBeLessThanOrEqual(3);
      expect(conn.shellStats).toMatchObject({ shells: 2, viaExec: 0 });
      follow.close();
    } finally {
      await conn.stop();
      server.close();
    }
  }, 120_000);
});
