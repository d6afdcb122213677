// What runs on a host, read from the kernel rather than from unit files: the process table (`ps`), the exact argv
// of the processes that look like SGLang (`/proc/<pid>/cmdline`, NUL-separated, variables already expanded by
// systemd), and the TCP listeners (`ss -ltnp`). systemctl prints a unit's argv joined with plain spaces, which
// cannot be split back into words; the kernel's copy can. Pure: text in, structures out (commands.ts has the
// commands).

export interface HostProcess {
  pid: number;
  ppid: number;
  /** `ps` args: argv joined with spaces — good for recognising a program, never for splitting. */
  joined: string;
}

/** Parses `ps -e -o pid=,ppid=,args=`. */
export function parsePs(text: string): Map<number, HostProcess> {
  const out = new Map<number, HostProcess>();
  for (const line of text.split('\n')) {
    const m = /^\s*(\d+)\s+(\d+)\s?(.*)$/.exec(line);
    if (!m) continue;
    const pid = Number(m[1]);
    out.set(pid, { pid, ppid: Number(m[2]), joined: m[3] ?? '' });
  }
  return out;
}

/** The process and its descendants, breadth first (the process itself first). Bounded against cycles. */
export function processTree(root: number, procs: ReadonlyMap<number, HostProcess>): number[] {
  const children = new Map<number, number[]>();
  for (const p of procs.values()) {
    if (p.pid === p.ppid) continue;
    const list = children.get(p.ppid);
    if (list) list.push(p.pid);
    else children.set(p.ppid, [p.pid]);
  }
  const order: number[] = [];
  const seen = new Set<number>();
  const queue = [root];
  while (queue.length > 0 && order.length < MAX_TREE) {
    const pid = queue.shift() as number;
    if (seen.has(pid)) continue;
    seen.add(pid);
    order.push(pid);
    for (const c of (children.get(pid) ?? []).sort((a, b) => a - b)) queue.push(c);
  }
  return order;
}

/** A unit's process tree larger than this is cut: SGLang's own tree is a handful of processes. */
const MAX_TREE = 256;

/**
 * Parses `head -c N -- /proc/P1/cmdline /proc/P2/cmdline …`: GNU head prints "==> FILE <==" before each file
 * when given several (and nothing when given one, so the caller names the single pid). A process that exited
 * in between is missing from the output (head reports it on stderr).
 */
export function parseCmdlines(text: string, pids: readonly number[]): Map<number, string[]> {
  const out = new Map<number, string[]>();
  const argvOf = (raw: string): string[] => {
    const words = raw.replace(/\n*$/, '').split('\0');
    // cmdline ends with a NUL, so the last field is empty.
    if (words.length > 0 && words[words.length - 1] === '') words.pop();
    return words;
  };
  if (pids.length === 1) {
    if (text !== '') out.set(pids[0], argvOf(text));
    return out;
  }
  const header = /(?:^|\n\n?)==> \/proc\/(\d+)\/cmdline <==\n/g;
  const marks = [...text.matchAll(header)];
  marks.forEach((m, i) => {
    const start = (m.index ?? 0) + m[0].length;
    const end = i + 1 < marks.length ? (marks[i + 1].index ?? text.length) : text.length;
    out.set(Number(m[1]), argvOf(text.slice(start, end)));
  });
  return out;
}

export interface Listener {
  /** As ss prints it: "127.0.0.1", "0.0.0.0", "*", "[::]", "[::1]". */
  address: string;
  port: number;
  /** Pids ss names (only for the user's own processes unless run as root). */
  pids: number[];
}

/** Parses `ss -ltnpH` (or with a header line). */
export function parseListeners(text: string): Listener[] {
  const out: Listener[] = [];
  for (const line of text.split('\n')) {
    const cols = line.trim().split(/\s+/);
    if (cols[0] !== 'LISTEN' || cols.length < 4) continue;
    const local = cols[3];
    const colon = local.lastIndexOf(':');
    const port = Number(local.slice(colon + 1));
    if (colon <= 0 || !Number.isInteger(port)) continue;
    // ss prints "127.0.0.1%lo" for a bound device; the address is what precedes it.
    const address = local.slice(0, colon).replace(/%\S*$/, '');
    const pids = [...line.matchAll(/pid=(\d+)/g)].map((m) => Number(m[1]));
    out.push({ address, port, pids });
  }
  return out;
}

const WILDCARDS = new Set(['0.0.0.0', '*', '[::]', '::']);

/** Whether a listener accepts connections to `host:port` (a wildcard listener accepts any local address). */
export function listensFor(l: Listener, host: string, port: number): boolean {
  if (l.port !== port) return false;
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  const a = l.address.replace(/^\[|\]$/g, '').toLowerCase();
  return WILDCARDS.has(l.address) || a === h || (WILDCARDS.has(host) && a !== '');
}
