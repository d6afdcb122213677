import { describe, expect, it } from 'vitest';
import {
  parseSystemctlShow,
  parseSystemdTimestamp,
  systemctlShowCommand,
} from '../../src/main/core/probes/systemd';

const SHOW = `Id=sglang-prefill.service
Description=SGLang prefill (PD)
LoadState=loaded
ActiveState=active
SubState=running
MainPID=48211
NRestarts=0
Result=success
ExecMainStatus=0
ActiveEnterTimestamp=Sun 2026-11-29 16:46:30 UTC
MemoryCurrent=12884901888
ExecStart={ path=/opt/sglang/venv/bin/python ; argv[]=/opt/sglang/venv/bin/python -m sglang.launch_server --port 30100 ; ignore_errors=no ; start_time=[n/a] ; stop_time=[n/a] ; pid=0 ; code=(null) ; status=0/0 }

Id=sglang-decode.service
Description=SGLang decode (PD)
LoadState=loaded
ActiveState=activating
SubState=start
MainPID=50001
NRestarts=3
Result=success
ActiveEnterTimestamp=
MemoryCurrent=[not set]

Id=nope.service
LoadState=not-found
ActiveState=inactive
SubState=dead
MainPID=0
NRestarts=0
Result=success
`;

describe('systemctl show', () => {
  it('builds one batched, quoted command and refuses unsafe unit names', () => {
    expect(systemctlShowCommand(['a.service', 'b@1.service'])).toBe(
      'systemctl show --no-pager --property=Id,Description,LoadState,ActiveState,SubState,MainPID,NRestarts,Result,ExecMainStatus,ExecMainCode,Restart,ActiveEnterTimestamp,StateChangeTimestamp,ExecMainStartTimestamp,InactiveEnterTimestamp,MemoryCurrent,ExecStart a.service b@1.service',
    );
    expect(() => systemctlShowCommand(['x; rm -rf /'])).toThrow(/refusing to send unit name/);
    expect(() => systemctlShowCommand(['$(id)'])).toThrow(/refusing/);
    expect(() => systemctlShowCommand(['--all'])).toThrow(/refusing/);
  });

  it('parses several units by Id, whatever the property order', () => {
    const m = parseSystemctlShow(SHOW, ['sglang-prefill.service', 'sglang-decode.service', 'nope.service']);
    const p = m.get('sglang-prefill.service')!;
    expect(p.activeState).toBe('active');
    expect(p.subState).toBe('running');
    expect(p.mainPid).toBe(48211);
    expect(p.activeEnterTimestamp).toBe(Date.UTC(2026, 10, 29, 16, 46, 30));
    expect(p.memoryCurrentBytes).toBe(12884901888);
    expect(p.execStart).toContain('sglang.launch_server');
    const d = m.get('sglang-decode.service')!;
    expect(d.activeState).toBe('activating');
    expect(d.nRestarts).toBe(3);
    expect(d.activeEnterTimestamp).toBeNull();
    expect(d.memoryCurrentBytes).toBeNull();
    expect(m.get('nope.service')!.loadState).toBe('not-found');
  });

  it('rejects output that is not key=value, naming the line', () => {
    expect(() => parseSystemctlShow('Id=a.service\ngarbage here\n', ['a.service'])).toThrow(
      /line 2 is not key=value/,
    );
    expect(() => parseSystemctlShow('', ['a.service'])).toThrow(/printed nothing for a.service/);
  });

  it('reads timestamps with zones and offsets', () => {
    expect(parseSystemdTimestamp('Sun 2026-11-29 16:46:30 UTC')).toBe(Date.UTC(2026, 10, 29, 16, 46, 30));
    expect(parseSystemdTimestamp('Sun 2026-11-29 17:46:30 +0100')).toBe(Date.UTC(2026, 10, 29, 16, 46, 30));
    // An abbreviation we cannot map uses the host offset we were given (CET = +60 min).
    expect(parseSystemdTimestamp('Sun 2026-11-29 17:46:30 CET', 60)).toBe(Date.UTC(2026, 10, 29, 16, 46, 30));
    expect(parseSystemdTimestamp('n/a')).toBeNull();
  });
});

describe('shell quoting', async () => {
  const { shellCommand } = await import('../../src/main/core/ssh/shell');
  const { parse } = await import('shell-quote');
  it('leaves plain words alone and single-quotes the rest so a shell reads back the same argv', () => {
    expect(shellCommand(['systemctl', 'restart', 'a@b.service'])).toBe('systemctl restart a@b.service');
    const nasty = ["it's", '$(id)', 'a b', '`x`', '"q"', ';', '', '\\n'];
    const line = shellCommand(nasty);
    expect(parse(line)).toEqual(nasty);
  });
});
