import { describe, expect, it } from 'vitest';
import {
  GpuParseError,
  NVIDIA_SMI_COMMAND,
  parseNvidiaSmi,
  parseNvidiaSmiLines,
} from '../../src/main/core/probes/gpu';

// As printed by `nvidia-smi --query-gpu=… --format=csv,noheader,nounits` on an 8× H100 host.
const H100 = `0, NVIDIA H100 80GB HBM3, 97, 75321, 81559, 61, 612.34, 700.00
1, NVIDIA H100 80GB HBM3, 96, 75321, 81559, 63, 598.10, 700.00
2, NVIDIA H100 80GB HBM3, 97, 75321, 81559, 60, 605.77, 700.00
3, NVIDIA H100 80GB HBM3, 95, 75321, 81559, 62, 601.02, 700.00
4, NVIDIA H100 80GB HBM3, 41, 78012, 81559, 52, 331.50, 700.00
5, NVIDIA H100 80GB HBM3, 40, 78012, 81559, 51, 329.93, 700.00
6, NVIDIA H100 80GB HBM3, 42, 78012, 81559, 53, 335.20, 700.00
7, NVIDIA H100 80GB HBM3, 41, 78012, 81559, 50, 330.01, 700.00
`;

describe('nvidia-smi query', () => {
  it('asks for exactly the fields the parser reads, machine-readable', () => {
    expect(NVIDIA_SMI_COMMAND).toBe(
      'nvidia-smi --query-gpu=index,name,utilization.gpu,memory.used,memory.total,temperature.gpu,power.draw,power.limit --format=csv,noheader,nounits',
    );
  });

  it('parses an 8-GPU host', () => {
    const gpus = parseNvidiaSmi(H100);
    expect(gpus).toHaveLength(8);
    expect(gpus[4]).toEqual({
      index: 4,
      name: 'NVIDIA H100 80GB HBM3',
      utilPct: 41,
      memUsedMiB: 78012,
      memTotalMiB: 81559,
      tempC: 52,
      powerW: 331.5,
      powerLimitW: 700,
    });
  });

  it('turns [N/A] / [Not Supported] into null and tolerates blank lines and CRLF', () => {
    const text =
      '\r\n0, NVIDIA A10G, 12, 1024, 23028, 38, [N/A], [Not Supported]\r\n\r\n1, Tesla T4, [N/A], 0, 15360, 30, 9.81, 70.00\r\n';
    const gpus = parseNvidiaSmi(text);
    expect(gpus.map((g) => [g.index, g.powerW, g.powerLimitW, g.utilPct])).toEqual([
      [0, null, null, 12],
      [1, 9.81, 70, null],
    ]);
  });

  it('keeps a GPU name that contains a comma', () => {
    const [g] = parseNvidiaSmi('0, Acme GPU, rev 2, 1, 2, 3, 4, 5, 6\n');
    expect(g.name).toBe('Acme GPU, rev 2');
    expect(g.powerLimitW).toBe(6);
  });

  it('a malformed line is a typed error naming the line, with a hint when the cause is known', () => {
    const text = `${H100.split('\n').slice(0, 2).join('\n')}\nUnable to determine the device handle for GPU0000:3B:00.0: Unknown Error\n`;
    let err: unknown;
    try {
      parseNvidiaSmi(text);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(GpuParseError);
    const e = err as GpuParseError;
    expect(e.line).toBe(3);
    expect(e.message).toContain('line 3');
    expect(e.message).toContain('GPU0000:3B:00.0');
    expect(e.hint).toMatch(/dropped off the bus/);
  });

  it('reports driver failure and non-numeric fields', () => {
    expect(() =>
      parseNvidiaSmi(
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n",
      ),
    ).toThrow(/driver is not loaded/);
    expect(() => parseNvidiaSmi('0, H100, 97%, 1, 2, 3, 4, 5\n')).toThrow(/utilization.gpu is "97%"/);
    expect(() => parseNvidiaSmi('x, H100, 1, 1, 2, 3, 4, 5\n')).toThrow(/GPU index "x"/);
    expect(() => parseNvidiaSmi('0, H100, [GPU is lost], 1, 2, 3, 4, 5\n')).toThrow(GpuParseError);
  });

  it('lenient parse keeps the good GPUs next to the errors', () => {
    const r = parseNvidiaSmiLines(`${H100}garbage\n`);
    expect(r.gpus).toHaveLength(8);
    expect(r.errors.map((e) => e.line)).toEqual([9]);
  });
});
