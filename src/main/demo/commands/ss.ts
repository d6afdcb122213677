// `ss` (socket statistics) for a demo host, the two forms PD Console runs: `ss -ltn` (listening TCP: sshd
// and each port a unit's process has bound now; a prefill's bootstrap port is bound from process start until
// it exits, as SGLang's KV sender does) and `ss -Htn state established '( sport = :P )'` (the connections to
// a local port: the other nodes of a multi-node worker connect to rank 0's --dist-init-addr port).
import type { CommandContext } from './context';

function flagsOf(argv: string[]): Set<string> {
  return new Set(argv.flatMap((a) => (/^-[a-zA-Z]+$/.test(a) ? a.slice(1).split('') : [])));
}

export function ss(argv: string[], ctx: CommandContext): number {
  const args = argv.slice(1);
  const flags = flagsOf(args);
  const words = args.filter((a) => !a.startsWith('-'));
  const header = !flags.has('H');
  if (flags.has('l') && flags.has('t') && !words.length) return listening(ctx, header);
  const sport = /^\(\s*sport\s*=\s*:(\d+)\s*\)$/.exec(words[2] ?? '');
  if (flags.has('t') && words[0] === 'state' && words[1] === 'established' && sport)
    return established(ctx, Number(sport[1]), header);
  ctx.io.err(
    `ss: the demo host emulates \`ss -ltn\` and \`ss -Htn state established '( sport = :PORT )'\` only\n`,
  );
  return 1;
}

function listening(ctx: CommandContext, header: boolean): number {
  const machine = ctx.sim;
  const ports = new Set([22]);
  for (const p of machine.httpPorts()) if (machine.portOpen(p)) ports.add(p);
  if (!machine.isDown)
    for (const u of machine.units())
      if (u.server && u.def.server?.bootstrapPort !== undefined) ports.add(u.def.server.bootstrapPort);
  const rows = header ? ['State  Recv-Q Send-Q Local Address:Port Peer Address:Port Process'] : [];
  for (const p of [...ports].sort((a, b) => a - b))
    rows.push(`LISTEN 0      ${p === 22 ? 128 : 2048}    0.0.0.0:${p}        0.0.0.0:*`);
  ctx.io.out(`${rows.join('\n')}\n`);
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
