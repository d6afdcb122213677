// Where the other nodes of a multi-node worker run, read from node rank 0's host: every node connects to the
// TCP store rank 0 serves at --dist-init-addr, so the established connections to that port name their
// addresses. `ss` (iproute2) prints them; the addresses are then placed like worker URLs (an ssh alias).
import { isIP } from 'node:net';

/** Established TCP connections to a local port, no header: `Recv-Q Send-Q Local:Port Peer:Port`. */
export function nodePeersCommand(port: number): string {
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new RangeError(`not a port: ${port}`);
  return `ss -Htn state established '( sport = :${port} )'`;
}

/** The peer addresses of `ss -Htn` lines, each once (IPv4-mapped IPv6 as IPv4, brackets and zones dropped). */
export function parseSsPeers(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    const cols = line.trim().split(/\s+/);
    const peer = cols.at(-1);
    if (!peer || cols.length < 4) continue;
    const m = /^\[?(.*?)(?:%[^\]]*)?\]?:(\d+|\*)$/.exec(peer);
    if (!m) continue;
    const addr = m[1].replace(/^::ffff:/i, '').toLowerCase();
    if (isIP(addr) && !out.includes(addr)) out.push(addr);
  }
  return out;
}

/** The port of a `HOST:PORT` (or `[v6]:PORT`) --dist-init-addr. */
export function distInitPort(addr: string): number | undefined {
  const m = /:(\d{1,5})$/.exec(addr.trim());
  const n = m ? Number(m[1]) : NaN;
  return n >= 1 && n <= 65535 ? n : undefined;
}
