// The small commands a client runs to learn where it is: id, whoami, hostname, uname, date, uptime,
// command -v / which, echo, true/false, and cat of the few files that exist on the demo host.
import { systemdTimestamp } from '../time-format';
import { staticFileOf } from '../prometheus-unit';
import type { CommandContext } from './context';

const KERNEL = '6.8.0-51-generic';
const unameA = (hostname: string): string =>
  `Linux ${hostname} ${KERNEL} #52-Ubuntu SMP PREEMPT_DYNAMIC Thu Dec  5 13:09:44 UTC 2024 x86_64 x86_64 x86_64 GNU/Linux`;

/** Paths of the executables the demo host has. */
export const BINARIES: Record<string, string> = {
  systemctl: '/usr/bin/systemctl',
  journalctl: '/usr/bin/journalctl',
  'nvidia-smi': '/usr/bin/nvidia-smi',
  curl: '/usr/bin/curl',
  ss: '/usr/bin/ss',
  ps: '/usr/bin/ps',
  sudo: '/usr/bin/sudo',
  id: '/usr/bin/id',
  whoami: '/usr/bin/whoami',
  hostname: '/usr/bin/hostname',
  uname: '/usr/bin/uname',
  cat: '/usr/bin/cat',
  date: '/usr/bin/date',
  uptime: '/usr/bin/uptime',
  echo: '/usr/bin/echo',
  true: '/usr/bin/true',
  false: '/usr/bin/false',
  python3: '/usr/bin/python3',
  bash: '/usr/bin/bash',
  sh: '/usr/bin/sh',
};

const OS_RELEASE = `PRETTY_NAME="Ubuntu 24.04.1 LTS"
NAME="Ubuntu"
VERSION_ID="24.04"
VERSION="24.04.1 LTS (Noble Numbat)"
VERSION_CODENAME=noble
ID=ubuntu
ID_LIKE=debian
HOME_URL="https://www.ubuntu.com/"
SUPPORT_URL="https://help.ubuntu.com/"
BUG_REPORT_URL="https://bugs.launchpad.net/ubuntu/"
PRIVACY_POLICY_URL="https://www.ubuntu.com/legal/terms-and-policies/privacy-policy"
UBUNTU_CODENAME=noble
LOGO=ubuntu-logo
`;

function uid(user: string): number {
  return user === 'root' ? 0 : 1000;
}

export function id(argv: string[], ctx: CommandContext): number {
  const u = ctx.user;
  const n = uid(u);
  // Short flags combine: `id -un` is `id -u -n`.
  const f = new Set(argv.slice(1).flatMap((a) => (/^-[a-zA-Z]+$/.test(a) ? a.slice(1).split('') : [a])));
  const groupNames = u === 'root' ? 'root' : `${u} adm sudo systemd-journal`;
  const groupIds = u === 'root' ? '0' : `${n} 4 27 999`;
  if (f.has('u') || f.has('g')) ctx.io.out(f.has('n') ? `${u}\n` : `${n}\n`);
  else if (f.has('G')) ctx.io.out(f.has('n') ? `${groupNames}\n` : `${groupIds}\n`);
  else
    ctx.io.out(
      u === 'root'
        ? 'uid=0(root) gid=0(root) groups=0(root)\n'
        : `uid=${n}(${u}) gid=${n}(${u}) groups=${n}(${u}),4(adm),27(sudo),999(systemd-journal)\n`,
    );
  return 0;
}

export function misc(argv: string[], ctx: CommandContext): number | null {
  const { io, sim } = ctx;
  const [cmd, ...args] = argv;
  switch (cmd) {
    case 'id':
      return id(argv, ctx);
    case 'whoami':
      io.out(`${ctx.user}\n`);
      return 0;
    case 'hostname':
      io.out(
        args.includes('-f') || args.includes('--fqdn')
          ? `${ctx.sim.hostname}.lab.internal\n`
          : `${ctx.sim.hostname}\n`,
      );
      return 0;
    case 'uname': {
      if (!args.length || args.includes('-s'))
        io.out(args.includes('-a') ? `${unameA(sim.hostname)}\n` : 'Linux\n');
      else if (args.includes('-a')) io.out(`${unameA(sim.hostname)}\n`);
      else if (args.includes('-r')) io.out(`${KERNEL}\n`);
      else if (args.includes('-n')) io.out(`${ctx.sim.hostname}\n`);
      else if (args.includes('-m')) io.out('x86_64\n');
      else io.out(`${unameA(sim.hostname)}\n`);
      return 0;
    }
    case 'date': {
      const now = sim.now;
      const fmt = args.find((a) => a.startsWith('+'));
      if (fmt === '+%s') io.out(`${Math.floor(now / 1000)}\n`);
      else if (fmt === '+%s%N')
        io.out(`${Math.floor(now / 1000)}${String((now % 1000) * 1_000_000).padStart(9, '0')}\n`);
      else if (fmt === '+%s.%N')
        io.out(`${Math.floor(now / 1000)}.${String((now % 1000) * 1_000_000).padStart(9, '0')}\n`);
      else if (args.some((a) => a === '-Is' || a.startsWith('--iso-8601')))
        io.out(`${new Date(Math.floor(now / 1000) * 1000).toISOString().replace('.000Z', '+00:00')}\n`);
      else io.out(`${systemdTimestamp(now)}\n`);
      return 0;
    }
    case 'uptime': {
      const up = Math.floor((sim.now - sim.bootedAt) / 1000);
      if (args.includes('-s'))
        io.out(`${new Date(sim.bootedAt).toISOString().slice(0, 19).replace('T', ' ')}\n`);
      else if (args.includes('-p'))
        io.out(`up ${Math.floor(up / 86400)} days, ${Math.floor((up % 86400) / 3600)} hours\n`);
      else {
        const t = new Date(sim.now).toISOString().slice(11, 19);
        io.out(
          ` ${t} up ${Math.floor(up / 86400)} days, ${Math.floor((up % 86400) / 3600)}:${String(Math.floor((up % 3600) / 60)).padStart(2, '0')},  1 user,  load average: 5.41, 5.37, 5.22\n`,
        );
      }
      return 0;
    }
    case 'echo':
      io.out(`${args.filter((a, i) => !(i === 0 && a === '-n')).join(' ')}${args[0] === '-n' ? '' : '\n'}`);
      return 0;
    case 'true':
    case ':':
      return 0;
    case 'false':
      return 1;
    case 'command':
    case 'which':
    case 'type': {
      const names = args.filter((a) => !a.startsWith('-'));
      let code = 0;
      for (const n of names) {
        const path = BINARIES[n];
        if (path)
          io.out(cmd === 'type' ? `${n} is ${path}\n` : cmd === 'command' ? `${path}\n` : `${path}\n`);
        else {
          if (cmd === 'type') io.err(`bash: type: ${n}: not found\n`);
          code = 1;
        }
      }
      if (cmd === 'command' && !args.includes('-v') && !args.includes('-V')) return null;
      return code;
    }
    case 'cat': {
      let code = 0;
      for (const path of args.filter((a) => !a.startsWith('-'))) {
        const content = fileContent(ctx, path);
        if (content === null) {
          io.err(`cat: ${path}: No such file or directory\n`);
          code = 1;
        } else io.out(content);
      }
      return code;
    }
    default:
      return null;
  }
}

function fileContent(ctx: CommandContext, path: string): string | null {
  if (path === '/etc/hostname') return `${ctx.sim.hostname}\n`;
  if (path === '/etc/os-release' || path === '/usr/lib/os-release') return OS_RELEASE;
  if (path === '/proc/uptime') {
    const up = (ctx.sim.now - ctx.sim.bootedAt) / 1000;
    return `${up.toFixed(2)} ${(up * 170).toFixed(2)}\n`;
  }
  if (path === '/proc/sys/kernel/random/boot_id') {
    const b = ctx.sim.bootId;
    return `${b.slice(0, 8)}-${b.slice(8, 12)}-${b.slice(12, 16)}-${b.slice(16, 20)}-${b.slice(20)}\n`;
  }
  for (const u of ctx.sim.units()) if (u.def.fragmentPath === path) return u.def.unitFileText;
  return staticFileOf(ctx.sim, path);
}
