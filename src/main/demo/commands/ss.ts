// `ss` (socket statistics) for a demo host, the forms PD Console runs: `ss -ltn[p][H]` (listening TCP: every
// socket a process of the host's process table listens on — sshd, the host's daemons, and each port a unit's
// process has bound now; a prefill's bootstrap port is bound from process start until it exits, as SGLang's KV
// sender does) and `ss -Htn state established '( sport = :P )'` (the connections to a local port: the other nodes
// of a multi-node worker connect to rank 0's --dist-init-addr port). With -p, ss names the owning process only of
// the user's own sockets unless it runs as root. The layout is ss's own when not writing to a terminal
// (iproute2 6.1, renderSs), so the columns line up exactly as a real host's do.
import { processTable } from '../process-table';
import type { CommandContext } from './context';

function flagsOf(argv: string[]): Set<string> {
  return new Set(argv.flatMap((a) => (/^-[a-zA-Z]+$/.test(a) ? a.slice(1).split('') : [])));
}

export function ss(argv: string[], ctx: CommandContext): number {
  const args = argv.slice(1);
  const flags = flagsOf(args);
  const words = args.filter((a) => !a.startsWith('-'));
  const header = !flags.has('H');
  if (flags.has('l') && flags.has('t') && !words.length) return listening(ctx, header, flags.has('p'));
  const sport = /^\(\s*sport\s*=\s*:(\d+)\s*\)$/.exec(words[2] ?? '');
  if (flags.has('t') && words[0] === 'state' && words[1] === 'established' && sport)
    return established(ctx, Number(sport[1]), header);
  ctx.io.err(
    `ss: the demo host emulates \`ss -ltn[p][H]\` and \`ss -Htn state established '( sport = :PORT )'\` only\n`,
  );
  return 1;
}

/** One listening socket as ss prints it. */
export interface SsRow {
  state: string;
  recvQ: number;
  sendQ: number;
  local: string;
  localPort: string;
  peer: string;
  peerPort: string;
  process: string;
}

interface SsColumn {
  header: string;
  right: boolean;
  ldelim: string;
  cell: (r: SsRow) => string;
}

const SS_COLUMNS: SsColumn[] = [
  { header: 'State', right: false, ldelim: ' ', cell: (r) => r.state },
  // ss prints the queues with "%-6d".
  { header: 'Recv-Q', right: false, ldelim: ' ', cell: (r) => String(r.recvQ).padEnd(6) },
  { header: 'Send-Q', right: false, ldelim: ' ', cell: (r) => String(r.sendQ).padEnd(6) },
  { header: 'Local Address:', right: true, ldelim: ' ', cell: (r) => `${r.local}:` },
  { header: 'Port', right: false, ldelim: '', cell: (r) => r.localPort },
  { header: 'Peer Address:', right: true, ldelim: ' ', cell: (r) => `${r.peer}:` },
  { header: 'Port', right: false, ldelim: '', cell: (r) => r.peerPort },
  { header: 'Process', right: false, ldelim: '', cell: (r) => r.process },
];

/**
 * ss's render() when stdout is not a terminal ("compact output"): each column as wide as its widest cell
 * (header included when printed) plus its left delimiter, right-aligned addresses, left-aligned rest.
 */
export function renderSs(rows: readonly SsRow[], header: boolean): string {
  const cells = [
    ...(header ? [SS_COLUMNS.map((c) => c.header)] : []),
    ...rows.map((r) => SS_COLUMNS.map((c) => c.cell(r))),
  ];
  if (!cells.length) return '';
  let first = true;
  const widths = SS_COLUMNS.map((c, i) => {
    const max = Math.max(...cells.map((row) => [...row[i]].length));
    const w = !first && max ? max + c.ldelim.length : max;
    if (w) first = false;
    return w;
  });
  const lines = cells.map((row) => {
    let line = '';
    let started = false;
    SS_COLUMNS.forEach((c, i) => {
      const text = row[i];
      let printed = 0;
      if (started) {
        line += c.ldelim;
        printed = c.ldelim.length;
      }
      started = true;
      const len = [...text].length;
      if (widths[i] && c.right) {
        const pad = widths[i] - len - printed;
        if (pad > 0) line += ' '.repeat(pad);
        printed += Math.max(pad, 0);
      }
      line += text;
      printed += len;
      if (widths[i] && !c.right && widths[i] - printed > 0) line += ' '.repeat(widths[i] - printed);
    });
    return line;
  });
  return `${lines.join('\n')}\n`;
}

function listening(ctx: CommandContext, header: boolean, processes: boolean): number {
  const rows: SsRow[] = [];
  for (const p of processTable(ctx.sim)) {
    const shown = processes && (ctx.user === 'root' || p.user === ctx.user);
    for (const l of p.listens) {
      const v6 = l.address.startsWith('[');
      const wildcard = l.address === '*';
      rows.push({
        state: 'LISTEN',
        recvQ: 0,
        sendQ: l.backlog,
        local: l.address,
        localPort: String(l.port),
        peer: wildcard ? '*' : v6 ? '[::]' : '0.0.0.0',
        peerPort: '*',
        process: shown ? ` users:(("${p.comm}",pid=${p.pid},fd=${l.fd}))` : '',
      });
    }
  }
  rows.sort((a, b) => Number(a.localPort) - Number(b.localPort));
  ctx.io.out(renderSs(rows, header));
  return 0;
}

function established(ctx: CommandContext, port: number, header: boolean): number {
  const machine = ctx.sim;
  const rows = header ? ['Recv-Q Send-Q Local Address:Port Peer Address:Port Process'] : [];
  if (!machine.isDown)
    for (const u of machine.units()) {
      const node = u.def.server?.node;
      if (!u.server || !node || node.rank !== 0 || !node.distInitAddr.endsWith(`:${port}`)) continue;
      const [peerHost, ...rest] = node.peer.split('/');
      const peer = machine.world.host(peerHost);
      const peerUnit = peer.units.find((x) => x.def.name === rest.join('/'));
      if (!peerUnit?.server || machine.world.hostDown(peerHost)) continue;
      rows.push(
        `0      0      ${machine.address}:${port}     ${peer.spec.address}:${41000 + (peerUnit.mainPid % 20000)}`,
      );
    }
  ctx.io.out(rows.length ? `${rows.join('\n')}\n` : '');
  return 0;
}
