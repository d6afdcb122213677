// nvidia-smi for the demo host's 8 H100s: --query-gpu / --query-compute-apps with --format=csv[,noheader]
// [,nounits], -L, and a compact default table. The malformed-nvidia-smi fault produces the kinds of broken
// output a GPU that fell off the bus gives: "[Unknown Error]", "[N/A]", a handle error and a cut-off row.
import type { GpuReading } from '../simulation';
import type { CommandContext } from './context';

interface Field {
  header: string;
  unit?: string;
  value: (g: GpuReading) => string;
}

const num = (v: number, digits = 0): string => v.toFixed(digits);

const GPU_FIELDS: Record<string, Field> = {
  index: { header: 'index', value: (g) => String(g.index) },
  name: { header: 'name', value: (g) => g.name },
  gpu_name: { header: 'name', value: (g) => g.name },
  uuid: { header: 'uuid', value: (g) => g.uuid },
  gpu_uuid: { header: 'uuid', value: (g) => g.uuid },
  'pci.bus_id': { header: 'pci.bus_id', value: (g) => g.busId },
  gpu_bus_id: { header: 'pci.bus_id', value: (g) => g.busId },
  'utilization.gpu': { header: 'utilization.gpu', unit: '%', value: (g) => num(g.utilization) },
  'utilization.memory': {
    header: 'utilization.memory',
    unit: '%',
    value: (g) => num(Math.round(g.utilization * 0.62)),
  },
  'memory.used': { header: 'memory.used', unit: 'MiB', value: (g) => num(g.memoryUsedMiB) },
  'memory.total': { header: 'memory.total', unit: 'MiB', value: (g) => num(g.memoryTotalMiB) },
  'memory.free': {
    header: 'memory.free',
    unit: 'MiB',
    value: (g) => num(g.memoryTotalMiB - g.memoryUsedMiB - 510),
  },
  'temperature.gpu': { header: 'temperature.gpu', value: (g) => num(g.temperature) },
  'power.draw': { header: 'power.draw', unit: 'W', value: (g) => num(g.powerDraw, 2) },
  'power.limit': { header: 'power.limit', unit: 'W', value: (g) => num(g.powerLimit, 2) },
  pstate: { header: 'pstate', value: (g) => g.pstate },
  driver_version: { header: 'driver_version', value: () => '550.127.05' },
  persistence_mode: { header: 'persistence_mode', value: () => 'Enabled' },
  'clocks.sm': {
    header: 'clocks.current.sm',
    unit: 'MHz',
    value: (g) => num(g.utilization > 0 ? 1980 : 345),
  },
};

const ALIASES: Record<string, string> = {
  'power.draw.instant': 'power.draw',
  'enforced.power.limit': 'power.limit',
  gpu_name: 'name',
};

interface Format {
  header: boolean;
  units: boolean;
}

function parseFormat(spec: string): Format | null {
  const parts = spec.split(',').map((s) => s.trim());
  if (parts[0] !== 'csv') return null;
  const f: Format = { header: true, units: true };
  for (const p of parts.slice(1)) {
    if (p === 'noheader') f.header = false;
    else if (p === 'nounits') f.units = false;
    else return null;
  }
  return f;
}

export function nvidiaSmi(argv: string[], ctx: CommandContext): number {
  const { sim, io } = ctx;
  if (sim.isFaultOn('nvidia-smi-missing')) {
    io.err(`bash: nvidia-smi: command not found\n`);
    return 127;
  }
  const args = argv.slice(1);
  let query: string | null = null;
  let apps: string | null = null;
  let format: string | null = null;
  let list = false;
  let ids: number[] | null = null;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const eq = a.indexOf('=');
    const key = eq > 0 ? a.slice(0, eq) : a;
    const val = (): string | null => (eq > 0 ? a.slice(eq + 1) : i + 1 < args.length ? args[++i] : null);
    if (key === '--query-gpu') query = val();
    else if (key === '--query-compute-apps') apps = val();
    else if (key === '--format') format = val();
    else if (key === '-L' || key === '--list-gpus') list = true;
    else if (key === '-i' || key === '--id') ids = (val() ?? '').split(',').map(Number);
    else {
      io.err(`\nInvalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n\n`);
      return 2;
    }
  }
  const gpus = sim.gpus().filter((g) => !ids || ids.includes(g.index));
  const malformed = sim.isFaultOn('malformed-nvidia-smi');
  if (list) {
    for (const g of gpus) io.out(`GPU ${g.index}: ${g.name} (UUID: ${g.uuid})\n`);
    return 0;
  }
  if (query !== null || apps !== null) {
    if (format === null) {
      io.err(`\nMissing --format argument. Please run 'nvidia-smi -h' for help.\n\n`);
      return 2;
    }
    const f = parseFormat(format);
    if (!f) {
      io.err(`\n"${format}" is not a valid format.\n\n`);
      return 2;
    }
    return apps !== null ? computeApps(ctx, apps, f, gpus) : queryGpu(ctx, query ?? '', f, gpus, malformed);
  }
  io.out(table(gpus, sim.now));
  return 0;
}

function queryGpu(
  ctx: CommandContext,
  query: string,
  f: Format,
  gpus: GpuReading[],
  malformed: boolean,
): number {
  const names = query.split(',').map((s) => s.trim());
  const fields: Field[] = [];
  for (const n of names) {
    const field = GPU_FIELDS[ALIASES[n] ?? n];
    if (!field) {
      ctx.io.out(`Field "${n}" is not a valid field to query.\n\n`);
      return 2;
    }
    fields.push(field);
  }
  const lines: string[] = [];
  if (f.header)
    lines.push(fields.map((x) => (x.unit && f.units ? `${x.header} [${x.unit}]` : x.header)).join(', '));
  for (const g of gpus) {
    const cells = fields.map((x) => {
      const v = x.value(g);
      return x.unit && f.units ? `${v} ${x.unit}` : v;
    });
    if (malformed && g.index === 2) {
      lines.push(fields.map((x) => (x.header === 'index' ? '2' : '[Unknown Error]')).join(', '));
      continue;
    }
    if (malformed && g.index === 5) {
      lines.push(
        fields
          .map((x) =>
            x.header === 'index' || x.header === 'name' || x.header === 'uuid' ? x.value(g) : '[N/A]',
          )
          .join(', '),
      );
      continue;
    }
    if (malformed && g.index === 7) {
      const row = cells.join(', ');
      lines.push(row.slice(0, Math.ceil(row.length / 2)));
      continue;
    }
    lines.push(cells.join(', '));
  }
  if (malformed) {
    lines.splice(
      f.header ? 4 : 3,
      0,
      'Unable to determine the device handle for GPU0000:5D:00.0: Unknown Error',
    );
  }
  ctx.io.out(`${lines.join('\n')}\n`);
  return 0;
}

function computeApps(ctx: CommandContext, query: string, f: Format, gpus: GpuReading[]): number {
  const fields: Record<
    string,
    { header: string; unit?: string; value: (g: GpuReading, pid: number) => string }
  > = {
    pid: { header: 'pid', value: (_g, pid) => String(pid) },
    process_name: { header: 'process_name', value: () => '/opt/sglang/venv/bin/python' },
    name: { header: 'process_name', value: () => '/opt/sglang/venv/bin/python' },
    used_memory: {
      header: 'used_gpu_memory',
      unit: 'MiB',
      value: (g) => String(Math.max(0, g.memoryUsedMiB - 520)),
    },
    used_gpu_memory: {
      header: 'used_gpu_memory',
      unit: 'MiB',
      value: (g) => String(Math.max(0, g.memoryUsedMiB - 520)),
    },
    gpu_uuid: { header: 'gpu_uuid', value: (g) => g.uuid },
    gpu_name: { header: 'gpu_name', value: (g) => g.name },
    gpu_bus_id: { header: 'gpu_bus_id', value: (g) => g.busId },
  };
  const names = query.split(',').map((s) => s.trim());
  for (const n of names) {
    if (!fields[n]) {
      ctx.io.out(`Field "${n}" is not a valid field to query.\n\n`);
      return 2;
    }
  }
  const lines: string[] = [];
  if (f.header) {
    lines.push(
      names
        .map((n) =>
          fields[n].unit && f.units ? `${fields[n].header} [${fields[n].unit}]` : fields[n].header,
        )
        .join(', '),
    );
  }
  const row = (g: GpuReading, pid: number, over?: { usedMiB: number; args: string }): string =>
    names
      .map((n) => {
        const field = fields[n];
        const v = !over
          ? field.value(g, pid)
          : field.header === 'used_gpu_memory'
            ? String(over.usedMiB)
            : field.header === 'process_name'
              ? over.args.split(' ')[0]
              : field.value(g, pid);
        return field.unit && f.units ? `${v} ${field.unit}` : v;
      })
      .join(', ');
  for (const g of gpus) {
    // Each TP rank is its own process: the scheduler of the rank on this GPU.
    for (const pid of g.pids) lines.push(row(g, pid));
    for (const p of g.foreign) lines.push(row(g, p.pid, p));
  }
  ctx.io.out(lines.length ? `${lines.join('\n')}\n` : '');
  return 0;
}

function table(gpus: GpuReading[], now: number): string {
  const d = new Date(now);
  const days = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const p2 = (n: number): string => String(n).padStart(2, '0');
  const stamp = `${days[d.getUTCDay()]} ${months[d.getUTCMonth()]} ${String(d.getUTCDate()).padStart(2, ' ')} ${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}:${p2(d.getUTCSeconds())} ${d.getUTCFullYear()}`;
  const sep = '+-----------------------------------------+------------------------+----------------------+';
  const out = [
    stamp,
    '+-----------------------------------------------------------------------------------------+',
    '| NVIDIA-SMI 550.127.05             Driver Version: 550.127.05     CUDA Version: 12.4     |',
    '|-----------------------------------------+------------------------+----------------------+',
    '| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |',
    '| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |',
    '|                                         |                        |               MIG M. |',
    '|=========================================+========================+======================|',
  ];
  for (const g of gpus) {
    out.push(
      `| ${String(g.index).padStart(3)}  ${'NVIDIA H100 80GB HBM3'.padEnd(24)}   On  | ${g.busId.slice(4)} Off |                    0 |`,
      `| N/A   ${String(g.temperature).padStart(2)}C    ${g.pstate.padEnd(3)}         ${String(Math.round(g.powerDraw)).padStart(4)}W /  ${g.powerLimit}W | ${`${g.memoryUsedMiB}MiB /  ${g.memoryTotalMiB}MiB`.padStart(22)} | ${`${g.utilization}%`.padStart(8)}      Default |`,
      '|                                         |                        |             Disabled |',
      sep,
    );
  }
  return `${out.join('\n')}\n`;
}
