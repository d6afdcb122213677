// `ss -ltn` (socket statistics: listening TCP, numeric) for a demo host: sshd, and each port a unit's
// process has bound right now. A prefill's bootstrap port is bound from process start (the KV sender
// listens before the HTTP server is up) until the process exits, as SGLang does.
import type { CommandContext } from './context';

export function ss(argv: string[], ctx: CommandContext): number {
  const flags = new Set(argv.slice(1).flatMap((a) => (/^-[a-zA-Z]+$/.test(a) ? a.slice(1).split('') : [a])));
  if (!flags.has('l') || !flags.has('t') || [...flags].some((f) => !'ltnH'.includes(f))) {
    ctx.io.err(`ss: the demo host emulates only \`ss -ltn\` (listening TCP sockets, numeric)\n`);
    return 1;
  }
  const machine = ctx.sim;
  const ports = new Set([22]);
  for (const p of machine.httpPorts()) if (machine.portOpen(p)) ports.add(p);
  if (!machine.isDown)
    for (const u of machine.units())
      if (u.server && u.def.server?.bootstrapPort !== undefined) ports.add(u.def.server.bootstrapPort);
  const rows = flags.has('H') ? [] : ['State  Recv-Q Send-Q Local Address:Port Peer Address:Port Process'];
  for (const p of [...ports].sort((a, b) => a - b))
    rows.push(`LISTEN 0      ${p === 22 ? 128 : 2048}    0.0.0.0:${p}        0.0.0.0:*`);
  ctx.io.out(`${rows.join('\n')}\n`);
  return 0;
}
