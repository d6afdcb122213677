// ps (procps-ng) on a demo host: `ps -e|-A|-p PIDS -o FIELDS` with pid, ppid, user, comm and args. The process
// table is the host's own: init, journald and sshd, each running unit's main process (its ExecStartPost
// while it runs), a server's scheduler process per GPU under its main pid (the pids nvidia-smi lists), and the
// processes of the foreign-gpu-process fault. Only what the console and an operator's first look need.
import type { DemoMachine } from '../machine';
import { rankPid } from '../processes';
import type { CommandContext } from './context';

interface Proc {
  pid: number;
  ppid: number;
  user: string;
  args: string;
}

type Field = 'pid' | 'ppid' | 'user' | 'comm' | 'args';

const FIELDS: Record<string, { field: Field; header: string; right: boolean }> = {
  pid: { field: 'pid', header: 'PID', right: true },
  ppid: { field: 'ppid', header: 'PPID', right: true },
  user: { field: 'user', header: 'USER', right: false },
  euser: { field: 'user', header: 'EUSER', right: false },
  uname: { field: 'user', header: 'USER', right: false },
  comm: { field: 'comm', header: 'COMMAND', right: false },
  ucomm: { field: 'comm', header: 'COMMAND', right: false },
  args: { field: 'args', header: 'COMMAND', right: false },
  cmd: { field: 'args', header: 'CMD', right: false },
  command: { field: 'args', header: 'COMMAND', right: false },
};

/** The host's processes now, by pid. */
export function processTable(m: DemoMachine): Proc[] {
  const out: Proc[] = [
    { pid: 1, ppid: 0, user: 'root', args: '/sbin/init' },
    { pid: 612, ppid: 1, user: 'root', args: '/usr/lib/systemd/systemd-journald' },
    { pid: 1034, ppid: 1, user: 'root', args: 'sshd: /usr/sbin/sshd -D [listener] 0 of 10-100 startups' },
  ];
  for (const u of m.units()) {
    if (u.mainPid > 0)
      out.push({ pid: u.mainPid, ppid: 1, user: 'root', args: u.def.execStartArgv.join(' ') });
    if (u.controlPid > 0 && u.def.execStartPostArgv)
      out.push({ pid: u.controlPid, ppid: 1, user: 'root', args: u.def.execStartPostArgv.join(' ') });
    const s = u.server;
    if (!s) continue;
    // A scheduler whose main process is gone has been re-parented to init, as the kernel does.
    const parent = u.mainPid === s.pid ? s.pid : 1;
    const ranks = [...new Set(u.def.gpus.map((g) => rankPid(s.pid, g)))];
    ranks.forEach((pid, tp) =>
      out.push({ pid, ppid: parent, user: 'root', args: `sglang::scheduler_TP${tp}` }),
    );
  }
  for (const f of m.foreignGpuProcesses()) out.push({ pid: f.pid, ppid: 1, user: 'alice', args: f.args });
  return out.sort((a, b) => a.pid - b.pid);
}

function usage(ctx: CommandContext, why: string): number {
  ctx.io.err(
    `error: ${why}\n\nUsage:\n ps [options]\n\n Try 'ps --help <simple|list|output|threads|misc|all>'\n`,
  );
  return 1;
}

export function ps(argv: string[], ctx: CommandContext): number {
  let all = false;
  let pids: Set<number> | null = null;
  const columns: Array<{ field: Field; header: string; right: boolean }> = [];
  const args = argv.slice(1);
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '-e' || a === '-A') all = true;
    else if (a === '-ww' || a === 'ww' || a === '-w') continue;
    else if (a === '-o' || a === '-p' || a.startsWith('-o') || a.startsWith('-p')) {
      const value = a.length > 2 ? a.slice(2) : args[++i];
      if (value === undefined)
        return usage(ctx, `list of ${a === '-p' ? 'process IDs' : 'format specifiers'} must follow ${a}`);
      if (a.startsWith('-p')) {
        const list = value
          .split(/[\s,]+/)
          .filter(Boolean)
          .map(Number);
        if (list.some((n) => !Number.isInteger(n) || n < 0))
          return usage(ctx, 'process ID list syntax error');
        pids = new Set([...(pids ?? []), ...list]);
        continue;
      }
      // `pid=,ppid=,args=`: each specifier may set its header after "="; an empty one hides it.
      for (const spec of value.split(',')) {
        const eq = spec.indexOf('=');
        const name = eq >= 0 ? spec.slice(0, eq) : spec;
        const f = FIELDS[name];
        if (!f) return usage(ctx, `unknown user-defined format specifier "${name}"`);
        columns.push({ ...f, header: eq >= 0 ? spec.slice(eq + 1) : f.header });
      }
    } else return usage(ctx, `unsupported option ${a} on the demo host`);
  }
  if (!columns.length) columns.push(FIELDS.pid, { field: 'args', header: 'CMD', right: false });
  const rows = processTable(ctx.sim).filter((p) => (pids ? pids.has(p.pid) : all));
  const value = (p: Proc, f: Field): string =>
    f === 'pid'
      ? String(p.pid)
      : f === 'ppid'
        ? String(p.ppid)
        : f === 'user'
          ? p.user
          : f === 'comm'
            ? (p.args.split(' ')[0] ?? '').replace(/^.*\//, '').slice(0, 15)
            : p.args;
  const table = rows.map((p) => columns.map((c) => value(p, c.field)));
  const showHeader = columns.some((c) => c.header !== '');
  const widths = columns.map((c, i) =>
    Math.max(c.header.length, ...table.map((r) => r[i].length), c.right ? 7 : 0),
  );
  const line = (cells: string[]): string =>
    cells
      .map((v, i) =>
        i === cells.length - 1 && !columns[i].right
          ? v
          : columns[i].right
            ? v.padStart(widths[i])
            : v.padEnd(widths[i]),
      )
      .join(' ')
      .trimEnd();
  const out = [...(showHeader ? [line(columns.map((c) => c.header))] : []), ...table.map(line)];
  if (out.length) ctx.io.out(`${out.join('\n')}\n`);
  // procps exits 1 when a selection matched nothing.
  return rows.length ? 0 : 1;
}
