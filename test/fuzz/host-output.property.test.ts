// Property-based tests: whatever a host prints — random bytes, cut-off output, valid output with random
// damage — the parsers of systemctl, journalctl and nvidia-smi output (and discovery's unit-file readers)
// never crash with anything but their own typed errors, and never hang.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseSystemctlShow, SystemdParseError } from '../../src/main/core/probes/systemd';
import { parseJournalJson } from '../../src/main/core/journal/journal-json';
import { GpuParseError, parseNvidiaSmi, parseNvidiaSmiLines } from '../../src/main/core/probes/gpu';
import { parseListUnits, parseShowExec, parseUnitCat } from '../../src/main/core/discovery/unit-text';

const SHOW = `Id=sglang-decode.service
Description=SGLang decode (PD)
LoadState=loaded
ActiveState=active
SubState=running
MainPID=50001
NRestarts=3
Result=success
ActiveEnterTimestamp=Sun 2026-11-29 16:46:30 UTC
MemoryCurrent=12884901888
ExecStart={ path=/opt/sglang/venv/bin/python ; argv[]=/opt/sglang/venv/bin/python -m sglang.launch_server --port 30200 --enable-metrics ; ignore_errors=no }
`;
const JOURNAL =
  '{"__CURSOR":"s=1;i=2","__REALTIME_TIMESTAMP":"1795972341768000","PRIORITY":"6","MESSAGE":"Decode batch. #running-req: 57","_SYSTEMD_UNIT":"sglang-decode.service","_PID":"50001","SYSLOG_IDENTIFIER":"python"}\n';
const SMI =
  '0, NVIDIA H100 80GB HBM3, 87, 71234, 81559, 64, 512.33, 700.00\n1, NVIDIA H100 80GB HBM3, [N/A], 1, 81559, 40, 90.1, 700.00\n';
const CAT = `# /etc/systemd/system/sglang-decode.service
[Service]
Environment=CUDA_VISIBLE_DEVICES=4,5,6,7
ExecStart=/opt/sglang/venv/bin/python -m sglang.launch_server --model-path /m \\
  --port 30200 --disaggregation-mode decode --enable-metrics
`;

/** Valid text with random damage: bytes flipped, cut short, lines duplicated or dropped. */
function damaged(valid: string): fc.Arbitrary<string> {
  return fc.oneof(
    fc.string({ maxLength: 2000 }),
    fc.string({ unit: 'binary', maxLength: 2000 }),
    fc.nat(valid.length).map((n) => valid.slice(0, n)),
    fc
      .array(fc.tuple(fc.nat(valid.length), fc.string({ unit: 'binary', maxLength: 5 })), { maxLength: 8 })
      .map((edits) => edits.reduce((s, [at, ins]) => s.slice(0, at) + ins + s.slice(at + 1), valid)),
    fc.array(fc.constantFrom(...valid.split('\n')), { maxLength: 40 }).map((ls) => ls.join('\n')),
  );
}

function onlyTyped(fn: () => unknown, ...allowed: Array<new (...a: never[]) => Error>): void {
  try {
    fn();
  } catch (err) {
    if (!allowed.some((E) => err instanceof E)) throw err;
  }
}

const RUNS = { numRuns: 400, interruptAfterTimeLimit: 8000 };

describe('host output parsers under hostile input', () => {
  it('systemctl show: a UnitState map or a SystemdParseError', () => {
    fc.assert(
      fc.property(damaged(SHOW), (text) => {
        onlyTyped(() => parseSystemctlShow(text, ['sglang-decode.service']), SystemdParseError);
      }),
      RUNS,
    );
  });

  it('journalctl -o json: never throws; garbage lines are rejected, not parsed', () => {
    fc.assert(
      fc.property(damaged(JOURNAL.repeat(5)), (text) => {
        const r = parseJournalJson(text);
        for (const l of r.lines) {
          expect(typeof l.message).toBe('string');
          expect(Number.isFinite(l.ts)).toBe(true);
        }
      }),
      RUNS,
    );
  });

  it('nvidia-smi csv: readings or a GpuParseError naming the line; the lenient form never throws', () => {
    fc.assert(
      fc.property(damaged(SMI), (text) => {
        onlyTyped(() => parseNvidiaSmi(text), GpuParseError);
        const r = parseNvidiaSmiLines(text);
        expect(Array.isArray(r.gpus)).toBe(true);
        for (const e of r.errors) expect(e).toBeInstanceOf(GpuParseError);
      }),
      RUNS,
    );
  });

  it('discovery readers: list-units, systemctl cat and show never throw on damaged text', () => {
    fc.assert(
      fc.property(damaged(CAT), damaged(SHOW), (cat, show) => {
        parseUnitCat(cat, 'sglang-decode.service');
        parseShowExec(show);
        parseListUnits(show);
      }),
      RUNS,
    );
  });
});
