// The demo host against a real systemd 252: the demo's own unit files run verbatim in the container (the venv's
// python is a symlink to the stand-ins' interpreter), and every answer the product reads from a host is compared
// field by field with the demo's answer to the same command — `systemctl show` property by property, the
// journal's JSON (MESSAGE as string, byte array or null for each kind of line), PID 1's lines through a crash
// loop, list-units and list-unit-files, ps, /proc/<pid>/cmdline through head, ss. Values that differ by nature
// (PIDs, timestamps, invocation IDs) are compared by shape; a drift in wording or format fails.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DemoSimulation, emulateCommand } from '../../src/main/demo';
import { buildUnits, PYTHON } from '../../src/main/demo/units';
import { renderSs, type SsRow } from '../../src/main/demo/commands/ss';
import { formatEntry, type JournalEntry } from '../../src/main/demo/journal';
import {
  DISCOVERY_SHOW_PROPERTIES,
  LIST_UNIT_FILES_COMMAND,
  LIST_UNITS_COMMAND,
} from '../../src/main/core/discovery/commands';
import { SHOW_PROPERTIES } from '../../src/main/core/probes/systemd';
import { FOLLOW_PROPERTIES } from '../../src/main/core/actions/unit-commands';
import { JOURNAL_FIELDS } from '../../src/main/core/journal/journal-json';
import { realSystemdUnavailableReason } from './container';
import { bootRealDeployment, type RealDeployment } from './scenario';
import { manualClock, T0, type ManualClock } from '../demo/helpers';

const skip = realSystemdUnavailableReason();
if (skip) console.warn(`[skipped] the demo host against a real systemd: ${skip}`);

const UNITS = ['sglang-prefill.service', 'sglang-decode.service', 'sglang-router.service'];
const PORTS = [30100, 30200, 30001, 29001];
/** The login the demo's tests use (a non-root operator, like the container's). */
const DEMO_USER = 'operator';

type Block = Array<[string, string]>;

function parseShowBlocks(text: string): Block[] {
  return text
    .split(/\n\n/)
    .filter((b) => b.trim() !== '')
    .map((b) =>
      b
        .split('\n')
        .filter(Boolean)
        .map((l): [string, string] => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
    );
}

const TIMESTAMP = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun) \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/;
const EXEC =
  /^\{ path=(\S+) ; argv\[\]=(.*) ; (ignore_errors=(?:yes|no)|flags=\S*) ; start_time=\[(.*)\] ; stop_time=\[(.*)\] ; pid=(\d+) ; code=(\S+) ; status=(\S+) \}$/;

/**
 * A property value reduced to what must agree between any two hosts: exact for states, names, paths, argv and
 * environment; by shape for what differs by nature (pids, timestamps, ids). MemoryCurrent is "[not set]" in
 * this container (no memory controller is delegated to it) and bytes on a GPU host: either is its shape.
 */
function shapeOf(key: string, value: string, mainPid: string): string {
  if (key.endsWith('TimestampMonotonic')) return value === '0' ? '0' : /^\d+$/.test(value) ? 'µs' : value;
  if (key.endsWith('Timestamp')) return value === '' ? '' : TIMESTAMP.test(value) ? 'timestamp' : value;
  if (key === 'MainPID' || key === 'ExecMainPID')
    return value === '0' ? '0' : /^\d+$/.test(value) ? 'pid' : value;
  if (key === 'InvocationID') return value === '' ? '' : /^[0-9a-f]{32}$/.test(value) ? 'id' : value;
  if (key === 'MemoryCurrent') return /^(\d+|\[not set\])$/.test(value) ? 'memory' : value;
  if (key === 'ExecStart') {
    const m = EXEC.exec(value);
    if (!m) return `unparsed: ${value}`;
    const when = (t: string): string => (t === 'n/a' ? 'n/a' : TIMESTAMP.test(t) ? 'timestamp' : t);
    const pid = m[6] === '0' ? '0' : m[6] === mainPid ? 'MainPID' : 'other pid';
    return `{ path=${m[1]} ; argv[]=${m[2]} ; ${m[3]} ; start_time=${when(m[4])} ; stop_time=${when(m[5])} ; pid=${pid} ; code=${m[7]} ; status=${m[8]} }`;
  }
  return value;
}

function shapes(text: string): string[][] {
  return parseShowBlocks(text).map((b) => {
    const mainPid = b.find(([k]) => k === 'MainPID')?.[1] ?? '';
    return b.map(([k, v]) => `${k}=${shapeOf(k, v, mainPid)}`);
  });
}

interface JournalJson {
  __CURSOR: string;
  MESSAGE: string | number[] | null;
  [field: string]: unknown;
}

const parseJson = (text: string): JournalJson[] =>
  text
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as JournalJson);

const text = (m: JournalJson['MESSAGE']): string =>
  typeof m === 'string' ? m : Array.isArray(m) ? Buffer.from(m).toString('utf8') : '';

const shapeOfMessage = (m: JournalJson['MESSAGE']): string =>
  m === null ? 'null' : Array.isArray(m) ? 'bytes' : typeof m;

/** Which kind of line it is, read from the whole message (journalctl --all). */
function kindOf(e: JournalJson, message: string): string {
  if (e._PID === '1') return 'pid1';
  if (/^\[[^\]]+\] server_args=ServerArgs\(/.test(message)) return 'server-args';
  if (/^ *\rLoading safetensors checkpoint shards:/.test(message)) return 'shard-bar';
  if (/Capturing batches/.test(message)) return 'capture-bar';
  if (message.trim() === '') return 'tqdm-padding';
  return 'text';
}

/** For each kind of line: the MESSAGE shapes and the product's fields (present, and their values where fixed). */
function journalKinds(plain: string, all: string, mainPid: string): Record<string, string[]> {
  const full = new Map(parseJson(all).map((e) => [e.__CURSOR, text(e.MESSAGE)]));
  const out: Record<string, Set<string>> = {};
  for (const e of parseJson(plain)) {
    const message = full.get(e.__CURSOR) ?? '';
    const kind = kindOf(e, message);
    const fields = JOURNAL_FIELDS.filter((f) => f !== 'MESSAGE' && e[f] !== undefined).map((f) => {
      const v = String(e[f]);
      if (f === '_PID') return `${f}=${v === '1' ? '1' : v === mainPid ? 'MainPID' : 'other'}`;
      return `${f}=${v}`;
    });
    (out[kind] ??= new Set()).add(`MESSAGE:${shapeOfMessage(e.MESSAGE)} ${fields.join(' ')}`);
  }
  return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, [...v].sort()]));
}

describe.skipIf(skip !== null)('the demo host against a real systemd 252, field by field', () => {
  let d: RealDeployment;
  let clock: ManualClock;
  let sim: DemoSimulation;
  const units = buildUnits({ dpRanks: 1, metricsDisabled: new Set() });
  const defs = [units.prefill, units.decode, units.router];

  const real = async (
    command: string,
    user = 'root',
  ): Promise<{ stdout: string; stderr: string; code: number }> =>
    d.host.root(user === 'root' ? command : `su ${user} -c ${JSON.stringify(command)}`);
  const demo = async (
    command: string,
    user = DEMO_USER,
  ): Promise<{ stdout: string; stderr: string; code: number }> => {
    const r = await emulateCommand(sim, command, user);
    return {
      stdout: r.stdoutBytes ? r.stdoutBytes.toString('latin1') : r.stdout,
      stderr: r.stderr,
      code: r.exitCode,
    };
  };

  beforeAll(async () => {
    d = await bootRealDeployment(() => {
      const files: Record<string, string> = {};
      for (const def of defs) {
        files[def.fragmentPath] = def.unitFileText;
        Object.assign(files, def.files);
      }
      return {
        files,
        // The units need the venv's python, which is a symlink made after boot: enabled and started then.
        enable: [],
        unifiedCgroup: true,
        // tqdm skips redraws that come sooner than 0.1 s apart: shards and batch sizes take longer each, as on
        // a GPU host, so every redraw is drawn.
        behaviour: {
          'sglang-prefill.service': { shards: 17, loadSeconds: 0.5 },
          'sglang-decode.service': { shards: 17, loadSeconds: 17 * 0.15, captureSeconds: 20 * 0.15 },
        },
      };
    });
    const venv = PYTHON.slice(0, PYTHON.lastIndexOf('/'));
    const started = await d.host.root(
      `mkdir -p ${venv} && ln -s /usr/bin/python3 ${PYTHON} && systemctl enable --now --quiet ${UNITS.join(' ')}`,
    );
    expect(started.stderr).toBe('');
    const listening = PORTS.map((p) => `ss -ltnH | grep -q ':${p} '`).join(' && ');
    const up = await d.host.root(`timeout 60 sh -c "until ${listening}; do sleep 0.1; done"`);
    if (up.code !== 0)
      throw new Error(
        `the demo's units did not listen in the container:\n${(await real('journalctl --no-pager -n 80')).stdout}`,
      );
    clock = manualClock(T0);
    sim = new DemoSimulation({ clock, historyMs: 10 * 60_000 });
  }, 600_000);
  afterAll(async () => d?.stop());

  it('systemctl show: every property the product reads, in systemd’s order, formatted alike', async () => {
    const props = [...new Set([...DISCOVERY_SHOW_PROPERTIES, ...SHOW_PROPERTIES, ...FOLLOW_PROPERTIES])];
    const cmd = `systemctl show --no-pager --property=${props.join(',')} ${UNITS.join(' ')} nosuch.service`;
    const [r, m] = [await real(cmd), await demo(cmd)];
    expect(shapes(m.stdout)).toEqual(shapes(r.stdout));
    // argv[] is the words joined by plain spaces: an apostrophe-free demo line still must not be re-quoted.
    expect(m.stdout).toContain('--port ${PREFILL_PORT} --disaggregation-mode prefill');
    expect(m.stdout).not.toMatch(/argv\[\]=[^;]*"/);
  });

  it('systemctl show UNIT: the demo prints no property systemd 252 lacks, and keeps its order', async () => {
    const keys = (t: string): string[] => (parseShowBlocks(t)[0] ?? []).map(([k]) => k);
    const realKeys = keys((await real('systemctl show --no-pager sglang-decode.service')).stdout);
    const demoKeys = keys((await demo('systemctl show --no-pager sglang-decode.service')).stdout);
    expect(demoKeys.filter((k) => !realKeys.includes(k))).toEqual([]);
    const positions = demoKeys.map((k) => realKeys.indexOf(k));
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
  });

  it('EnvironmentFile: the file the port comes from reads the same, and the process runs with it expanded', async () => {
    const cmd = 'cat -- /etc/sglang/prefill.env';
    expect((await demo(cmd)).stdout).toBe((await real(cmd)).stdout);
  });

  it('list-units and list-unit-files word for word', async () => {
    for (const cmd of [
      "systemctl list-units --all --no-pager 'sglang*'",
      "systemctl list-units --no-pager 'sglang*'",
      "systemctl list-units --no-pager --state=failed 'sglang*'",
      "systemctl list-units --no-pager 'nosuch*'",
      "systemctl list-unit-files --no-pager 'sglang*'",
      "systemctl list-unit-files --no-pager 'nosuch*'",
    ])
      expect({ cmd, out: (await demo(cmd)).stdout }).toEqual({ cmd, out: (await real(cmd)).stdout });
    // The forms discovery runs: the demo's rows as the real host's (other units and widths differ by host).
    const rows = (t: string): string[] =>
      t
        .split('\n')
        .filter((l) => l.startsWith('sglang-'))
        .map((l) => l.split(/\s+/).join(' '));
    for (const cmd of [LIST_UNITS_COMMAND, LIST_UNIT_FILES_COMMAND])
      expect(rows((await demo(cmd)).stdout)).toEqual(rows((await real(cmd)).stdout));
  });

  it('ps and /proc/<pid>/cmdline: the units’ processes run their ExecStart, variables expanded, NUL-separated', async () => {
    const pidsOf = async (run: typeof real): Promise<string[]> =>
      (await run(`systemctl show -p MainPID --value ${UNITS.join(' ')}`)).stdout.split('\n').filter(Boolean);
    const [realPids, demoPids] = [await pidsOf(real), await pidsOf(demo)];
    // head of GNU coreutils: a header per file it opened, a blank line between, the missing one on stderr.
    const cmdline = (pids: string[]): string =>
      `head -c 262144 -- /proc/${pids[0]}/cmdline /proc/${pids[1]}/cmdline /proc/${pids[2]}/cmdline /proc/4000000/cmdline`;
    const norm = (s: string, pids: string[]): string =>
      pids.reduce((acc, p, i) => acc.split(`/proc/${p}/`).join(`/proc/P${i}/`), s);
    const [r, m] = [await real(cmdline(realPids)), await demo(cmdline(demoPids))];
    expect({ out: norm(m.stdout, demoPids), err: m.stderr, code: m.code }).toEqual({
      out: norm(r.stdout, realPids),
      err: r.stderr,
      code: r.code,
    });
    // ps: the same argv, joined with spaces; PID columns as wide as the host's pid_max.
    const psLines = async (run: typeof real, pids: string[]): Promise<string[]> => {
      const out = (await run('ps -e -o pid=,ppid=,args=')).stdout.split('\n');
      const width = (await run('cat /proc/sys/kernel/pid_max')).stdout.trim().length;
      return pids.map((p) => {
        const line = out.find((l) => l.trim().startsWith(`${p} `)) ?? `no ps line for ${p}`;
        expect(line.indexOf(p) + p.length).toBe(width);
        return line.trim().replace(/^\d+\s+/, 'PID ');
      });
    };
    expect(await psLines(demo, demoPids)).toEqual(await psLines(real, realPids));
  });

  it('ss -ltnpH: ss’s own column layout, and the owner shown to root only', async () => {
    const parse = (t: string): SsRow[] =>
      t
        .split('\n')
        .filter(Boolean)
        .map((l) => {
          const [state, recvQ, sendQ, local, peer, ...process] = l.trim().split(/\s+/);
          const at = (a: string): [string, string] => [
            a.slice(0, a.lastIndexOf(':')),
            a.slice(a.lastIndexOf(':') + 1),
          ];
          return {
            state,
            recvQ: Number(recvQ),
            sendQ: Number(sendQ),
            local: at(local)[0],
            localPort: at(local)[1],
            peer: at(peer)[0],
            peerPort: at(peer)[1],
            process: process.length ? ` ${process.join(' ')}` : '',
          };
        });
    for (const [cmd, user] of [
      ['ss -ltnpH', 'root'],
      ['ss -ltnpH', 'ops'],
      ['ss -ltnp', 'root'],
    ] as const) {
      const r = (await real(cmd, user)).stdout;
      // The container's real sockets, laid out by the demo's renderer: byte for byte what ss printed.
      const rows = parse(cmd.includes('H') ? r : r.split('\n').slice(1).join('\n'));
      expect(renderSs(rows, !cmd.includes('H'))).toBe(r);
    }
    const owner = (t: string, port: number): string | undefined =>
      t
        .split('\n')
        .find((l) => l.includes(`:${port} `))
        ?.match(/users:\(\("([^"]+)",pid=\d+,fd=\d+\)\)/)?.[1];
    for (const port of PORTS) {
      expect(owner((await demo('ss -ltnpH', 'root')).stdout, port)).toBe(
        owner((await real('ss -ltnpH')).stdout, port),
      );
      expect(owner((await demo('ss -ltnpH')).stdout, port)).toBe(
        owner((await real('ss -ltnpH', 'ops')).stdout, port),
      );
    }
  });

  it('journalctl -o json: every kind of line carries the MESSAGE shape and fields journald gives it', async () => {
    const unit = 'sglang-decode.service';
    const cmd = (all: boolean): string => `journalctl --no-pager -o json ${all ? '--all ' : ''}-u ${unit}`;
    const mainPid = async (run: typeof real): Promise<string> =>
      (await run(`systemctl show -p MainPID --value ${unit}`)).stdout.trim();
    const kinds = async (run: typeof real): Promise<Record<string, string[]>> =>
      journalKinds((await run(cmd(false))).stdout, (await run(cmd(true))).stdout, await mainPid(run));
    const [r, m] = [await kinds(real), await kinds(demo)];
    // tqdm writes spaces over a longer previous redraw; whether a redraw was shorter depends on timing.
    delete r['tqdm-padding'];
    delete m['tqdm-padding'];
    expect(m['server-args']).toEqual(r['server-args']);
    expect(m['shard-bar']).toEqual(r['shard-bar']);
    expect(m['capture-bar']).toEqual(r['capture-bar']);
    expect(m.text).toEqual(r.text);
    expect(m.pid1).toEqual(expect.arrayContaining(r.pid1));
  });

  it('journald’s rules on the same bytes: the 4096-byte JSON threshold, byte arrays, blobs, tabs and colours', async () => {
    const lines: Buffer[] = [
      Buffer.from('x'.repeat(4087)),
      Buffer.from('x'.repeat(4088)),
      Buffer.from('a\rb'),
      Buffer.from('tab\there'),
      Buffer.from('esc \x1b[1mbold\x1b[0m'),
      Buffer.from([0x62, 0x61, 0x64, 0x20, 0xff, 0xfe, 0x20, 0x78]),
      Buffer.from(`${'y'.repeat(2000)}\r${'z'.repeat(2100)}`),
      Buffer.from('ünïcödé ✓'),
    ];
    const tag = 'pd-fidelity';
    d.host.writeFile('/root/fidelity.bin', Buffer.concat(lines.flatMap((l) => [l, Buffer.from('\n')])));
    await real(`systemd-cat -t ${tag} < /root/fidelity.bin && journalctl --sync`);
    const after = (t: string): string[] =>
      t
        .split('\n')
        .filter(Boolean)
        .map((l) => l.slice(l.indexOf(': ') + 2));
    const realJson = parseJson((await real(`journalctl -o json --no-pager -t ${tag}`)).stdout).map(
      (e) => e.MESSAGE,
    );
    const realAll = parseJson((await real(`journalctl -o json --all --no-pager -t ${tag}`)).stdout).map(
      (e) => e.MESSAGE,
    );
    const realShort = after((await real(`journalctl -o short --no-pager -t ${tag}`)).stdout);
    const entry = (message: Buffer): JournalEntry => ({
      seq: 1,
      realtimeUs: T0 * 1000,
      monotonicUs: 1,
      bootId: '0'.repeat(32),
      unit: 'sglang-decode.service',
      fromSystemd: false,
      pid: 4242,
      identifier: tag,
      priority: 6,
      message: message.toString('utf8'),
      messageBytes: message,
    });
    const demoField = (l: Buffer, all: boolean): JournalJson['MESSAGE'] =>
      (JSON.parse(formatEntry(entry(l), 'json', { all }).toString('utf8')) as JournalJson).MESSAGE;
    expect(lines.map((l) => demoField(l, false))).toEqual(realJson);
    expect(lines.map((l) => demoField(l, true))).toEqual(realAll);
    expect(
      after(lines.map((l) => formatEntry(entry(l), 'short', { all: false }).toString('utf8')).join('\n')),
    ).toEqual(realShort);
  });

  it('the shard and CUDA-graph bars: the same redraws, split into journal lines as journald splits them', async () => {
    const bars = async (run: typeof real): Promise<{ shards: string[]; capture: string[] }> => {
      const lines = parseJson(
        (await run('journalctl --no-pager -o json --all -u sglang-decode.service')).stdout,
      ).map((e) => text(e.MESSAGE));
      const shards = lines
        .filter((l) => /^ *\rLoading safetensors/.test(l))
        .map((l) => /Completed \| (\d+\/\d+) \[/.exec(l)?.[1] ?? l);
      const capture = (lines.find((l) => l.includes('Capturing batches')) ?? '')
        .split('\r')
        .slice(1)
        .map((seg) => seg.replace(/ \[[^\]]*\] *$/, '').replace(/avail_mem=\d+\.\d\d/, 'avail_mem=X'));
      return { shards, capture };
    };
    expect(await bars(demo)).toEqual(await bars(real));
  });

  it('a crash loop: PID 1’s lines word for word, and systemctl show between two runs', async () => {
    const unit = 'sglang-decode.service';
    // The stand-in now dies as SGLang's watchdog kills its process tree (SIGKILL), after burning the CPU a load
    // costs; a drop-in shortens RestartSec so the test sees a restart soon.
    const behaviour = JSON.parse((await real('cat /etc/pd-sim/units.json')).stdout) as Record<string, object>;
    behaviour[unit] = { shards: 2, loadSeconds: 0.2, captureSeconds: 0.2, burnCpuS: 1.2, crashAfterS: 0.3 };
    d.host.writeFile('/etc/pd-sim/units.json', JSON.stringify(behaviour));
    d.host.writeFile(`/etc/systemd/system/${unit}.d/restart.conf`, '[Service]\nRestartSec=2\n');
    const cursor = JSON.parse((await real(`journalctl -o json -n 1 --no-pager -u ${unit}`)).stdout.trim())
      .__CURSOR as string;
    await real(`systemctl daemon-reload && systemctl restart ${unit}`);
    const show = `systemctl show --no-pager -p ActiveState,SubState,Result,NRestarts,ExecMainCode,ExecMainStatus,ExecStart ${unit}`;
    const waited = await real(
      `timeout 60 sh -c 'until [ "$(systemctl show -p NRestarts --value ${unit})" = 1 ] && [ "$(systemctl show -p SubState --value ${unit})" = auto-restart ]; do sleep 0.05; done'; ${show}`,
    );
    expect(waited.code).toBe(0);
    sim.setFault('crash-loop', true, 'decode');
    const before = sim.units.decode.nRestarts;
    for (
      let i = 0;
      i < 600 && !(sim.units.decode.nRestarts === before + 1 && sim.units.decode.subState === 'auto-restart');
      i++
    )
      clock.advance(500);
    expect(shapes((await demo(show)).stdout)).toEqual(shapes(waited.stdout));

    const pid1 = (out: string): string[] =>
      parseJson(out)
        .filter((e) => e._PID === '1')
        .map((e) => `${String(e.PRIORITY)} ${String(e.MESSAGE_ID)} ${text(e.MESSAGE)}`)
        // On this machine's hybrid cgroup tree no controller is delegated to the container (see unifiedCgroup).
        .filter((l) => !/Failed to kill control group/.test(l))
        .map((l) => l.replace(/Consumed (\d+h )?(\d+min )?\d+\.\d{3}s CPU time/, 'Consumed X CPU time'));
    const realLines = pid1(
      (await real(`journalctl -o json --no-pager -u ${unit} --after-cursor '${cursor}'`)).stdout,
    );
    const demoLines = pid1((await demo(`journalctl -o json --no-pager -u ${unit} -n 200`)).stdout);
    const cycle = (lines: string[]): string[] => {
      const from = lines.findIndex((l) => l.includes('Main process exited'));
      const to = lines.findIndex((l, i) => i > from && l.includes(': Scheduled restart job'));
      return lines.slice(from, to + 4);
    };
    // Past ten minutes of CPU the Consumed line is a notice: the demo's server has run that long, the stand-in not.
    const level = (lines: string[]): string[] =>
      lines.map((l) => l.replace(/^5 (\S+ \S+: Consumed)/, '6 $1'));
    expect(level(cycle(demoLines))).toEqual(level(cycle(realLines)));
  });
});
