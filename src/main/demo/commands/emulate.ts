// Runs one SSH exec command line on the demo host: shell parsing, sudo, `bash -c`, and dispatch to the
// emulated tools. Unknown commands fail the way bash does: "bash: X: command not found", exit 127.
import type { DemoSimulation } from '../simulation';
import { asMachine, type DemoMachine } from '../machine';
import type { CommandContext, CommandIO } from './context';
import { curl } from './curl';
import { journalctl } from './journalctl';
import { BINARIES, misc } from './misc';
import { nvidiaSmi } from './nvidia-smi';
import { ps } from './ps';
import { LAST_STATUS, parseShell, type SimpleCommand } from './shell';
import { ss } from './ss';
import { systemctl } from './systemctl';

export interface CommandResult {
  stdout: string;
  stderr: string;
  exitCode: number;
  /** Exact stdout bytes when they are not valid UTF-8 (the malformed-journal fault); `stdout` is then lossy. */
  stdoutBytes?: Buffer;
}

const MAX_NESTING = 4;

/** Streams a command's output into `io`; resolves with its exit code. */
export async function runCommand(
  target: DemoSimulation | DemoMachine,
  commandLine: string,
  asUser: string,
  io: CommandIO,
): Promise<number> {
  return runLine({ sim: asMachine(target), user: asUser, loginUser: asUser, io }, commandLine, 0);
}

/** `lastStatus`: what `$?` is before the line's first command (a shell reading lines passes the previous one's). */
async function runLine(ctx: CommandContext, line: string, depth: number, lastStatus = 0): Promise<number> {
  const parsed = parseShell(line);
  if (!parsed.ok) {
    ctx.io.err(parsed.message);
    return parsed.exitCode;
  }
  let code = lastStatus;
  for (const item of parsed.items) {
    if (item.join === '&&' && code !== 0) continue;
    if (item.join === '||' && code === 0) continue;
    if (ctx.io.signal.aborted) return 130;
    const status = String(code);
    const argv = item.cmd.argv.map((a) => (a.includes(LAST_STATUS) ? a.split(LAST_STATUS).join(status) : a));
    code = await runSimple(ctx, { ...item.cmd, argv }, depth);
  }
  return code;
}

/**
 * `sh` with no command: reads command lines from stdin until it ends, as a shell does over a pipe. A line with
 * an open quote continues on the next. Exits with the last command's status.
 */
async function readCommands(ctx: CommandContext, depth: number): Promise<number> {
  const stdin = ctx.io.stdin;
  if (!stdin) return 0;
  let code = 0;
  let pending = '';
  for (let line = await stdin.next(); line !== null; line = await stdin.next()) {
    if (ctx.io.signal.aborted) return 130;
    pending = pending ? `${pending}\n${line}` : line;
    const parsed = parseShell(pending);
    if (!parsed.ok && /unexpected EOF while looking for matching/.test(parsed.message)) continue;
    const text = pending;
    pending = '';
    if (!text.trim()) continue;
    code = await runLine(ctx, text, depth + 1, code);
  }
  if (pending) {
    ctx.io.err(`sh: 1: Syntax error: Unterminated quoted string\n`);
    return 2;
  }
  return code;
}

function redirected(io: CommandIO, cmd: SimpleCommand): CommandIO {
  const drop = (): void => undefined;
  const out = cmd.discardStdout
    ? drop
    : cmd.stdoutToStderr
      ? (c: string | Buffer): void => io.err(c)
      : (c: string | Buffer): void => io.out(c);
  const err = cmd.discardStderr ? drop : cmd.stderrToStdout ? out : (c: string | Buffer): void => io.err(c);
  return {
    out,
    err,
    signal: io.signal,
    canFollow: io.canFollow,
    stdin: cmd.stdinClosed ? undefined : io.stdin,
  };
}

async function runSimple(parent: CommandContext, cmd: SimpleCommand, depth: number): Promise<number> {
  const ctx: CommandContext = { ...parent, io: redirected(parent.io, cmd) };
  return runArgv(ctx, [...cmd.argv], depth);
}

async function runArgv(ctx: CommandContext, argv: string[], depth: number): Promise<number> {
  const { io } = ctx;
  // Wrappers that run the rest of the line.
  while (argv.length) {
    const head = argv[0];
    if (head === 'env') {
      argv.shift();
      while (argv.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(argv[0])) argv.shift();
      continue;
    }
    if (head === 'exec' || head === 'nohup' || (head === 'command' && argv[1] !== '-v' && argv[1] !== '-V')) {
      argv.shift();
      continue;
    }
    if (head === 'timeout') {
      argv.shift();
      while (argv.length && argv[0].startsWith('-')) argv.shift();
      argv.shift();
      continue;
    }
    break;
  }
  if (!argv.length) return 0;
  let name = argv[0];
  if (name.includes('/')) {
    const known = Object.entries(BINARIES).find(
      ([, path]) => path === name || path.replace('/usr', '') === name,
    );
    if (!known) {
      io.err(`bash: ${name}: No such file or directory\n`);
      return 127;
    }
    name = known[0];
    argv[0] = name;
  }
  if (name === 'sudo') return sudo(ctx, argv.slice(1), depth);
  if (name === 'bash' || name === 'sh') {
    const i = argv.findIndex((a, idx) => idx > 0 && /^-[a-z]*c[a-z]*$/.test(a));
    if (i > 0 && argv[i + 1] !== undefined) {
      if (depth >= MAX_NESTING) {
        io.err(`bash: maximum nesting of shells reached on the demo host\n`);
        return 2;
      }
      return runLine(ctx, argv[i + 1], depth + 1);
    }
    // Read from stdin like a shell over a pipe (`sh`, `sh -s`); other arguments would name a script file.
    if (argv.slice(1).every((a) => a === '-s')) return readCommands(ctx, depth);
    io.err(`${name}: the demo host has no script files; pass a command with -c or on stdin\n`);
    return 127;
  }
  switch (name) {
    case 'systemctl':
      return systemctl(argv, ctx);
    case 'journalctl':
      return journalctl(argv, ctx);
    case 'nvidia-smi':
      return nvidiaSmi(argv, ctx);
    case 'curl':
      return curl(argv, ctx);
    case 'ss':
      return ss(argv, ctx);
    case 'ps':
      return ps(argv, ctx);
    default: {
      const code = misc(argv, ctx);
      if (code !== null) return code;
      io.err(`bash: ${name}: command not found\n`);
      return 127;
    }
  }
}

async function sudo(ctx: CommandContext, args: string[], depth: number): Promise<number> {
  const { io, sim } = ctx;
  let nonInteractive = false;
  let target = 'root';
  let i = 0;
  for (; i < args.length; i++) {
    const a = args[i];
    if (a === '--') {
      i++;
      break;
    }
    if (!a.startsWith('-')) break;
    if (a === '-u' || a === '--user') target = args[++i] ?? 'root';
    else if (/^-[nEHSiks]+$/.test(a)) {
      if (a.includes('n')) nonInteractive = true;
    } else if (a === '--non-interactive') nonInteractive = true;
    else if (a === '--preserve-env' || a.startsWith('--preserve-env=')) continue;
    else {
      io.err(`sudo: unrecognized option '${a}'\nusage: sudo -h | -K | -k | -V\n`);
      return 1;
    }
  }
  const rest = args.slice(i);
  if (!rest.length) {
    io.err(
      'usage: sudo -h | -K | -k | -V\nusage: sudo -v [-ABkNnS] [-g group] [-h host] [-p prompt] [-u user]\n',
    );
    return 1;
  }
  if (ctx.user !== 'root' && sim.isFaultOn('sudo-password')) {
    if (nonInteractive) io.err('sudo: a password is required\n');
    else
      io.err(
        'sudo: a terminal is required to read the password; either use the -S option to read from standard input or configure an askpass helper\nsudo: a password is required\n',
      );
    return 1;
  }
  return runArgv({ ...ctx, user: target }, rest, depth);
}

/** Runs a command to completion and returns its buffered output. `journalctl -f` prints its backlog and returns. */
export async function emulateCommand(
  sim: DemoSimulation | DemoMachine,
  commandLine: string,
  asUser: string,
): Promise<CommandResult> {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const toBuf = (c: string | Buffer): Buffer => (typeof c === 'string' ? Buffer.from(c, 'utf8') : c);
  const controller = new AbortController();
  const exitCode = await runCommand(sim, commandLine, asUser, {
    out: (c) => out.push(toBuf(c)),
    err: (c) => err.push(toBuf(c)),
    signal: controller.signal,
    canFollow: false,
  });
  const bytes = Buffer.concat(out);
  const stdout = bytes.toString('utf8');
  const result: CommandResult = { stdout, stderr: Buffer.concat(err).toString('utf8'), exitCode };
  if (!Buffer.from(stdout, 'utf8').equals(bytes)) result.stdoutBytes = bytes;
  return result;
}
