// Pure format checks: the exact number, time and journal encodings the demo host prints.
import { describe, expect, it } from 'vitest';
import { floatToGoString, pyRepr } from '../../src/main/demo/exposition-writer';
import { Journal, formatEntry, seqOfCursor, cursorOf } from '../../src/main/demo/journal';
import { parseShell } from '../../src/main/demo/commands/shell';
import {
  cpuTimespan,
  parseJournalTime,
  systemdTimespan,
  systemdTimestamp,
} from '../../src/main/demo/time-format';
import { shardProgress } from '../../src/main/demo/log-lines';
import { T0 } from './helpers';

describe('Python float formatting (prometheus_client floatToGoString)', () => {
  it.each([
    [0, '0.0'],
    [57, '57.0'],
    [236544, '236544.0'],
    [4118204, '4.118204e+06'],
    [9021377, '9.021377e+06'],
    [0.53, '0.53'],
    [1e-5, '1e-05'],
    [0.0001, '0.0001'],
    [2311.7, '2311.7'],
    [1e16, '1e+16'],
    [Infinity, '+Inf'],
  ])('%s → %s', (v, want) => {
    expect(floatToGoString(v)).toBe(want);
  });

  it('matches repr() for negatives and fractions', () => {
    expect(pyRepr(-3.5)).toBe('-3.5');
    expect(pyRepr(0.1 + 0.2)).toBe('0.30000000000000004');
  });
});

describe('systemd time formats', () => {
  it('prints FORMAT_TIMESTAMP in UTC', () => {
    expect(systemdTimestamp(Date.UTC(2026, 10, 29, 16, 46, 30))).toBe('Sun 2026-11-29 16:46:30 UTC');
  });
  it('prints timespans like systemctl show', () => {
    expect(systemdTimespan(10e6)).toBe('10s');
    expect(systemdTimespan(1800e6)).toBe('30min');
    expect(systemdTimespan(90e6)).toBe('1min 30s');
  });
  it('parses journalctl --since specifications', () => {
    expect(parseJournalTime('2026-11-29 16:00:00', T0 + 5000)).toBe(T0);
    expect(parseJournalTime('-5min', T0)).toBe(T0 - 300_000);
    expect(parseJournalTime('5 min ago', T0)).toBe(T0 - 300_000);
    expect(parseJournalTime(`@${T0 / 1000}`, 0)).toBe(T0);
    expect(parseJournalTime('not a time', T0)).toBeNull();
  });
});

describe('durations in the simulated logs never show 60 seconds', () => {
  it('tqdm elapsed and ETA, and the CPU time systemd prints on stop, carry a full minute over', () => {
    // 59.6 s elapsed after 5 of 17 shards; 11.92 s/it over the 12 left is 143.04 s ≈ 02:23
    expect(shardProgress(5, 59.6)).toContain('[01:00<02:23, 11.92s/it]');
    expect(cpuTimespan(59.9996)).toBe('1min 0s');
    expect(cpuTimespan(3599.9999)).toBe('1h 0s');
    expect(cpuTimespan(125.25)).toBe('2min 5.25s');
  });
});

describe('journal output formats', () => {
  const j = new Journal(3);
  const base = {
    realtimeUs: T0 * 1000 + 123456,
    monotonicUs: 5_000_000,
    bootId: 'b'.repeat(32),
    unit: 'sglang-decode.service',
    pid: 48211,
    identifier: 'python',
    priority: 6,
  };
  const plain = j.append({ ...base, fromSystemd: false, message: 'Decode batch. #running-req: 57' });
  const pid1 = j.append({
    ...base,
    fromSystemd: true,
    message: 'Started sglang-decode.service - SGLang decode (PD).',
  });
  const bad = Buffer.from([0x61, 0xff, 0xfe, 0x62]);
  const binary = j.append({ ...base, fromSystemd: false, message: bad.toString('utf8'), messageBytes: bad });

  it('json has journald field names, µs timestamps as strings, and UNIT= for PID 1 messages', () => {
    const o = JSON.parse(formatEntry(plain, 'json', { all: false }).toString()) as Record<string, unknown>;
    expect(o.__REALTIME_TIMESTAMP).toBe(String(T0 * 1000 + 123456));
    expect(o.__MONOTONIC_TIMESTAMP).toBe('5000000');
    expect(o._SYSTEMD_UNIT).toBe('sglang-decode.service');
    expect(o._PID).toBe('48211');
    expect(o.SYSLOG_IDENTIFIER).toBe('python');
    expect(o.PRIORITY).toBe('6');
    expect(o._HOSTNAME).toBe('h100-pd-01');
    const s = JSON.parse(formatEntry(pid1, 'json', { all: false }).toString()) as Record<string, unknown>;
    expect(s._SYSTEMD_UNIT).toBe('init.scope');
    expect(s.UNIT).toBe('sglang-decode.service');
    expect(s._PID).toBe('1');
  });

  it('json shows invalid UTF-8 as a byte array and fields over 4096 bytes as null unless --all', () => {
    const o = JSON.parse(formatEntry(binary, 'json', { all: false }).toString()) as Record<string, unknown>;
    expect(o.MESSAGE).toEqual([0x61, 0xff, 0xfe, 0x62]);
    const big = j.append({ ...base, fromSystemd: false, message: 'x'.repeat(5000) });
    expect(
      (JSON.parse(formatEntry(big, 'json', { all: false }).toString()) as { MESSAGE: unknown }).MESSAGE,
    ).toBeNull();
    expect(
      (JSON.parse(formatEntry(big, 'json', { all: true }).toString()) as { MESSAGE: string }).MESSAGE,
    ).toHaveLength(5000);
  });

  it('short formats print "[N blob data]" for unprintable messages unless --all', () => {
    expect(formatEntry(binary, 'short', { all: false }).toString()).toBe(
      'Nov 29 16:00:00 h100-pd-01 python[48211]: [4B blob data]',
    );
    expect(formatEntry(binary, 'short', { all: true }).subarray(-4)).toEqual(bad);
    expect(formatEntry(pid1, 'short-iso', { all: false }).toString()).toBe(
      '2026-11-29T16:00:00+00:00 h100-pd-01 systemd[1]: Started sglang-decode.service - SGLang decode (PD).',
    );
  });

  it('cursors round-trip and the ring keeps only the newest entries', () => {
    expect(seqOfCursor(cursorOf(binary))).toBe(binary.seq);
    expect(seqOfCursor('s=other;i=1')).toBeNull();
    expect(j.size).toBe(3);
    expect([...j.entries()][0].seq).toBeGreaterThan(plain.seq);
  });
});

describe('shell parsing', () => {
  it('keeps quoted words whole and splits lists', () => {
    const p = parseShell(
      `sudo -n systemctl show 'sglang-decode.service' -p "ActiveState,SubState" && id -u; whoami`,
    );
    expect(p.ok).toBe(true);
    if (!p.ok) return;
    expect(p.items.map((i) => [i.join, i.cmd.argv])).toEqual([
      [';', ['sudo', '-n', 'systemctl', 'show', 'sglang-decode.service', '-p', 'ActiveState,SubState']],
      ['&&', ['id', '-u']],
      [';', ['whoami']],
    ]);
  });
  it('understands stream redirections and environment prefixes', () => {
    const p = parseShell('LC_ALL=C systemctl is-active x 2>/dev/null');
    expect(p.ok && p.items[0].cmd).toMatchObject({
      argv: ['systemctl', 'is-active', 'x'],
      env: { LC_ALL: 'C' },
      discardStderr: true,
    });
    const q = parseShell('journalctl -n 1 2>&1');
    expect(q.ok && q.items[0].cmd.stderrToStdout).toBe(true);
  });
  it('refuses pipelines and unbalanced quotes like bash would refuse them', () => {
    const p = parseShell('journalctl | head');
    expect(p.ok).toBe(false);
    const q = parseShell("echo 'oops");
    expect(q).toMatchObject({ ok: false, exitCode: 2 });
  });
});
