// Hosts of a multi-host PD deployment as systemd describes them, for fleet discovery tests: each unit is an
// ExecStart line, rendered as `systemctl cat` text and `systemctl show` blocks like a real host prints them.
// Unit names are deliberately unlike the demo's: discovery goes by what units run.
import { parse as shellParse } from 'shell-quote';
import { discoverDeployment, type DiscoveredUnit } from '../../src/main/core/discovery/discover';
import type { AliasAddress } from '../../src/main/core/ssh/alias-addresses';

/** An ssh alias whose HostName is one address, as `ssh -G` resolves it (user ops, port 22). */
export const alias = (name: string, address: string): AliasAddress => ({
  alias: name,
  hostname: address,
  port: 22,
  user: 'ops',
  addresses: [address],
});

export interface FakeUnit {
  unit: string;
  execStart: string;
  active?: 'active' | 'failed' | 'inactive';
}

const PY = '/opt/sglang/venv/bin/python -m';

export const server = (port: number, mode: 'prefill' | 'decode' | null, extra = ''): string =>
  `${PY} sglang.launch_server --model-path /models/Qwen3-32B --host 0.0.0.0 --port ${port} --tp-size 4 --enable-metrics` +
  (mode ? ` --disaggregation-mode ${mode}` : '') +
  (extra ? ` ${extra}` : '');

export const router = (args: string, port = 30001): string =>
  `${PY} sglang_router.launch_router --pd-disaggregation ${args} --host 0.0.0.0 --port ${port} --prometheus-port 29001`;

export function unitCat(u: FakeUnit): string {
  return `# /etc/systemd/system/${u.unit}\n[Unit]\nDescription=${u.unit}\n\n[Service]\nExecStart=${u.execStart}\nRestart=on-failure\n`;
}

/** What discovery finds on a host running these units (the pure half of runDiscovery). */
export function foundOn(host: string, units: readonly FakeUnit[]): DiscoveredUnit[] {
  return discoverDeployment({
    hostId: host,
    listUnits: listUnits(units),
    units: units.map((u) => ({ unit: u.unit, cat: unitCat(u) })),
  }).found;
}

export function listUnits(units: readonly FakeUnit[]): string {
  return (
    [
      'cron.service loaded active running Regular background program processing daemon',
      'ssh.service loaded active running OpenBSD Secure Shell server',
      ...units.map((u) => {
        const a = u.active ?? 'active';
        return `${u.unit} loaded ${a} ${a === 'active' ? 'running' : 'dead'} ${u.unit}`;
      }),
    ].join('\n') + '\n'
  );
}

/**
 * Answers the commands discovery and the fleet probe run, as systemd 252 would: list-units, show (any
 * properties: those it knows get values), cat, plus `hostname -I` and `ss`. Anything else exits 127 like a shell.
 */
export function answerSystemctl(
  units: readonly FakeUnit[],
  addresses: readonly string[],
  /** Established peers of a local port, as `ss -Htn state established '( sport = :PORT )'` lists them. */
  peers: Record<number, string[]> = {},
): (command: string) => { stdout: string; stderr: string; exitCode: number } {
  return (command) => {
    if (command.startsWith('hostname -I'))
      return { stdout: `${addresses.join(' ')} \n`, stderr: '', exitCode: 0 };
    const ss = /^ss -Htn state established '\( sport = :(\d+) \)'$/.exec(command);
    if (ss) {
      const port = Number(ss[1]);
      const lines = (peers[port] ?? []).map(
        (p, i) => `0      0      ${addresses[0] ?? '127.0.0.1'}:${port}      ${p}:${41000 + i}`,
      );
      return { stdout: lines.map((l) => l + '\n').join(''), stderr: '', exitCode: 0 };
    }
    const argv = shellParse(command).filter((t): t is string => typeof t === 'string');
    if (argv[0] !== 'systemctl')
      return { stdout: '', stderr: `bash: ${argv[0]}: command not found\n`, exitCode: 127 };
    const verb = argv.find((a) => !a.startsWith('-') && a !== 'systemctl');
    const names = argv.slice(argv.indexOf(verb ?? '') + 1).filter((a) => !a.startsWith('-'));
    if (verb === 'list-units') return { stdout: listUnits(units), stderr: '', exitCode: 0 };
    if (verb === 'cat') {
      const u = units.find((x) => x.unit === names[0]);
      return u
        ? { stdout: unitCat(u), stderr: '', exitCode: 0 }
        : { stdout: '', stderr: `No files found for ${names[0]}.\n`, exitCode: 1 };
    }
    if (verb === 'show') {
      const props = (argv.find((a) => a.startsWith('--property='))?.slice('--property='.length) ?? '').split(
        ',',
      );
      const blocks = names.map((name) => {
        const u = units.find((x) => x.unit === name);
        const a = u?.active ?? 'active';
        const value: Record<string, string> = {
          Id: name,
          Description: name,
          LoadState: u ? 'loaded' : 'not-found',
          ActiveState: u ? a : 'inactive',
          SubState: u ? (a === 'active' ? 'running' : 'dead') : 'dead',
          MainPID: u && a === 'active' ? '4242' : '0',
          NRestarts: '0',
          Result: 'success',
          ExecMainStatus: '0',
          ActiveEnterTimestamp: 'Tue 2026-12-01 09:00:00 UTC',
          MemoryCurrent: '[not set]',
          ExecStart: u
            ? `{ path=${u.execStart.split(' ')[0]} ; argv[]=${u.execStart} ; ignore_errors=no ; start_time=[n/a] ; stop_time=[n/a] ; pid=4242 ; code=(null) ; status=0/0 }`
            : '',
          Environment: '',
          EnvironmentFiles: '',
          FragmentPath: u ? `/etc/systemd/system/${name}` : '',
          NeedDaemonReload: 'no',
        };
        return props.map((p) => `${p}=${value[p] ?? ''}`).join('\n');
      });
      return { stdout: blocks.join('\n\n') + '\n', stderr: '', exitCode: 0 };
    }
    return { stdout: '', stderr: `Unknown command verb ${verb}.\n`, exitCode: 1 };
  };
}
