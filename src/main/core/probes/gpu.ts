// GPU readings from nvidia-smi's CSV query output, and which service runs on which GPU.

import type { GpuStatus } from '@shared/contract';
import type { ExecResult } from '../ssh/connection';

export const NVIDIA_SMI_FIELDS = [
  'index',
  'name',
  'utilization.gpu',
  'memory.used',
  'memory.total',
  'temperature.gpu',
  'power.draw',
  'power.limit',
] as const;

/** Fixed command (no interpolated input): one line per GPU, no header, no units. */
export const NVIDIA_SMI_COMMAND = `nvidia-smi --query-gpu=${NVIDIA_SMI_FIELDS.join(',')} --format=csv,noheader,nounits`;

export interface GpuReading {
  /** nvidia-smi index (PCI bus order). */
  index: number;
  name: string;
  /** null where nvidia-smi says [N/A] / [Not Supported]. */
  utilPct: number | null;
  memUsedMiB: number | null;
  memTotalMiB: number | null;
  tempC: number | null;
  powerW: number | null;
  powerLimitW: number | null;
}

export class GpuParseError extends Error {
  constructor(
    /** 1-based line number in the nvidia-smi output. */
    readonly line: number,
    readonly text: string,
    readonly problem: string,
    readonly hint?: string,
  ) {
    super(
      `nvidia-smi output line ${line}: ${problem}: ${JSON.stringify(text.slice(0, 200))}${hint ? ` — ${hint}` : ''}`,
    );
    this.name = 'GpuParseError';
  }
}

const NUMERIC = NVIDIA_SMI_FIELDS.length - 2;

/** Parses every line it can; malformed lines become errors alongside the good readings. */
export function parseNvidiaSmiLines(text: string): { gpus: GpuReading[]; errors: GpuParseError[] } {
  const gpus: GpuReading[] = [];
  const errors: GpuParseError[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === '') return;
    const r = parseLine(line, i + 1);
    if (r instanceof GpuParseError) errors.push(r);
    else gpus.push(r);
  });
  return { gpus, errors };
}

/**
 * One nvidia-smi reading of a host, as the dashboard shows it: the GPUs it could read, or why there are none
 * and what to do. Never throws: a failed read is a status like any other.
 */
export async function readGpuStatus(
  exec: (command: string, opts: { timeoutMs: number; maxBytes: number }) => Promise<ExecResult>,
  hostLabel: string,
  ts: number,
): Promise<GpuStatus> {
  try {
    const res = await exec(NVIDIA_SMI_COMMAND, { timeoutMs: 8000, maxBytes: 256 * 1024 });
    if (res.exitCode !== 0 && !res.stdout.trim()) {
      const why = (res.stderr || res.stdout).trim().split('\n')[0]?.slice(0, 200) || `exit ${res.exitCode}`;
      return {
        ts,
        gpus: [],
        error: `nvidia-smi failed on ${hostLabel}: ${why}`,
        hint: /not found/i.test(why)
          ? 'Install the NVIDIA driver utilities on the host or put nvidia-smi on the SSH user’s PATH.'
          : 'Check the NVIDIA driver on the host (dmesg, nvidia-smi by hand).',
      };
    }
    const { gpus, errors } = parseNvidiaSmiLines(res.stdout);
    return {
      ts,
      gpus,
      ...(errors.length > 0
        ? { error: errors[0].message, hint: errors[0].hint ?? 'Some GPU lines could not be read.' }
        : {}),
    };
  } catch (err) {
    return {
      ts,
      gpus: [],
      error: `GPU readings unavailable: ${(err as Error).message}`,
      hint: 'They resume when the connection does.',
    };
  }
}

/** Parses the whole output; throws the first GpuParseError (which names the line) if any line is malformed. */
export function parseNvidiaSmi(text: string): GpuReading[] {
  const { gpus, errors } = parseNvidiaSmiLines(text);
  if (errors.length > 0) throw errors[0];
  return gpus;
}

function parseLine(line: string, lineNo: number): GpuReading | GpuParseError {
  const fields = line.split(',').map((f) => f.trim());
  if (fields.length < NVIDIA_SMI_FIELDS.length) {
    return new GpuParseError(
      lineNo,
      line,
      `expected ${NVIDIA_SMI_FIELDS.length} comma-separated fields, got ${fields.length}`,
      hintFor(line),
    );
  }
  // A GPU name could contain a comma; the numeric fields never do, so take them from the end.
  const numeric = fields.slice(fields.length - NUMERIC);
  const name = fields.slice(1, fields.length - NUMERIC).join(', ');
  const index = Number(fields[0]);
  if (!/^\d+$/.test(fields[0]) || !Number.isSafeInteger(index)) {
    return new GpuParseError(
      lineNo,
      line,
      `GPU index ${JSON.stringify(fields[0])} is not a number`,
      hintFor(line),
    );
  }
  const values: (number | null)[] = [];
  for (let k = 0; k < numeric.length; k++) {
    const v = numericField(numeric[k]);
    if (v === undefined) {
      return new GpuParseError(
        lineNo,
        line,
        `field ${NVIDIA_SMI_FIELDS[k + 2]} is ${JSON.stringify(numeric[k])}, not a number or [N/A]`,
        hintFor(line),
      );
    }
    values.push(v);
  }
  const [utilPct, memUsedMiB, memTotalMiB, tempC, powerW, powerLimitW] = values;
  return { index, name, utilPct, memUsedMiB, memTotalMiB, tempC, powerW, powerLimitW };
}

/** A number, null for nvidia-smi's "not available" markers, undefined for anything else. */
function numericField(f: string): number | null | undefined {
  if (/^\[[^\]]*\]$/.test(f) || f === 'N/A' || f === '') {
    // [N/A], [Not Supported], [Unknown Error], [Insufficient Permissions]: a value nvidia-smi cannot give.
    return /lost/i.test(f) ? undefined : null;
  }
  const n = Number(f);
  return Number.isFinite(n) ? n : undefined;
}

function hintFor(line: string): string | undefined {
  if (/couldn't communicate with the NVIDIA driver/i.test(line)) {
    return 'the NVIDIA driver is not loaded or does not match the kernel; check `dmesg` and the driver installation';
  }
  if (/No devices were found/i.test(line)) return 'no NVIDIA GPU is visible on this host';
  if (/GPU is lost|Unable to determine the device handle/i.test(line)) {
    return 'a GPU dropped off the bus (look for Xid errors in `dmesg`); the host usually needs a GPU reset or reboot';
  }
  if (/command not found|No such file/i.test(line)) return 'nvidia-smi is not installed or not on PATH';
  return undefined;
}
