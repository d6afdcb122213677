// `ps` of procps-ng 4 over the demo host's process table (process-table.ts: init and the host's daemons, each
// unit's main process and SGLang's children — the scheduler pids nvidia-smi lists —, the foreign-gpu-process
// fault's job): -e/-A, -p PIDS, -o with the columns discovery, the roll's GPU check and operators use (pid, ppid,
// user, comm, args/cmd/command), "=" for no header. PID columns are as wide as pid_max (4194304 on a 64-bit
// systemd host: 7 digits); args is never cut when not on a terminal.
import { processTable } from '../process-table';
import type { CommandContext } from './context';

const PID_WIDTH = 7;

interface Column {
  key: 'pid' | 'ppid' | 'user' | 'comm' | 'args';
  header: string | null;
}

const ALIASES: Record<string, Column['key']> = {
  pid: 'pid',
  ppid: 'ppid',
  user: 'user',
  euser: 'user',
  comm: 'comm',
  ucomm: 'comm',
  args: 'args',
  cmd: 'args',
  command: 'args',
};

function usage(ctx: CommandContext, why: string): number {
  ctx.io.err(
    `error: ${why}\n\nUsage:\n ps [options]\n\n Try 'ps --help <simple|list|output|threads|misc|all>'\n`,
  );
  return 1;
}

const HEADERS: Record<Column['key'], string> = {
  pid: 'PID',
  ppid: 'PPID',
  user: 'USER',
  comm: 'COMMAND',
  args: 'COMMAND',
};

function parseFormat(spec: string): Column[] | string {
  const cols: Column[] = [];
  for (const part of spec.split(',')) {
    const eq = part.indexOf('=');
    const name = eq >= 0 ? part.slice(0, eq) : part;
    const key = ALIASES[name];
    if (!key) return name;
    cols.push({ key, header: eq >= 0 ? part.slice(eq + 1) : HEADERS[key] });
  }
  return cols;
}

export function ps(argv: string[], ctx: CommandContext): number {
  const { io } = ctx;
  let all = false;
  let pids: number[] | null = null;
  let cols: Column[] = [
    { key: 'pid', header: 'PID' },
    { key: 'args', header: 'CMD' },
  ];
  const args = argv.slice(1);
  for (let i = 0; i < args.length; i++) {
    let a = args[i];
    // "-eo pid=" is "-e -o pid=".
    if (/^-[eA]o$/.test(a)) {
      all = true;
      a = '-o';
    }
    if (a === '-e' || a === '-A' || a === 'ax' || a === '-ax') all = true;
    else if (a === '-w' || a === '-ww' || a === 'ww') continue;
    else if (a === '-o' || a === '-p' || a.startsWith('-o') || a.startsWith('-p') || a.startsWith('--pid=')) {
      const inline = a.startsWith('--pid=') ? a.slice(6) : a.length > 2 ? a.slice(2) : null;
      const v = inline ?? args[++i];
      if (v === undefined)
        return usage(
          ctx,
          `list of ${a.startsWith('-o') ? 'format specifiers' : 'process IDs'} must follow ${a}`,
        );
      if (a.startsWith('-o')) {
        const parsed = parseFormat(v);
        if (typeof parsed === 'string')
          return usage(ctx, `unknown user-defined format specifier "${parsed}"`);
        cols = parsed;
      } else {
        const list = v
          .split(/[,\s]+/)
          .filter(Boolean)
          .map(Number);
        if (list.some((n) => !Number.isInteger(n) || n < 0))
          return usage(ctx, 'process ID list syntax error');
        pids = [...(pids ?? []), ...list];
      }
    } else return usage(ctx, `unsupported option ${a} on the demo host`);
  }
  const session = { user: ctx.loginUser, argv: ['ps', ...args] };
  const procs = processTable(ctx.sim, session).filter((p) =>
    pids ? pids.includes(p.pid) : all || p.user === ctx.user,
  );
  const cell = (key: Column['key'], v: string): string => {
    if (key === 'pid' || key === 'ppid') return v.padStart(PID_WIDTH);
    if (key === 'user') return v.length > 8 ? `${v.slice(0, 7)}+` : v.padEnd(8);
    if (key === 'comm') return v.padEnd(15);
    return v;
  };
  const lines: string[] = [];
  if (cols.some((c) => c.header))
    lines.push(
      cols
        .map((c, i) => (i === cols.length - 1 ? (c.header ?? '') : cell(c.key, c.header ?? '')))
        .join(' ')
        .trimEnd(),
    );
  for (const p of procs) {
    const values: Record<Column['key'], string> = {
      pid: String(p.pid),
      ppid: String(p.ppid),
      user: p.user,
      comm: p.comm,
      args: p.args,
    };
    lines.push(
      cols
        .map((c, i) =>
          i === cols.length - 1 && (c.key === 'args' || c.key === 'comm')
            ? values[c.key]
            : cell(c.key, values[c.key]),
        )
        .join(' '),
    );
  }
  io.out(lines.length ? `${lines.join('\n')}\n` : '');
  // procps exits 1 when a selection (-p) matched nothing.
  return pids && procs.length === 0 ? 1 : 0;
}
