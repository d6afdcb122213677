// OpenMetrics 1.0 text export of a time range, with timestamps, for `promtool tsdb create-blocks-from openmetrics`
// (import into Prometheus) or any OM reader. Each family appears once with TYPE/HELP; within it each label set's
// MetricPoints are in time order (histogram buckets by le, then _count and _sum at the same timestamp); counters
// are named <family>_total; timestamps are seconds; the text ends with # EOF. A `target` label tells prefill,
// decode and router apart (a scraped `target` label is kept as `exported_target`, as Prometheus does).
import type { MetricType } from '../probes/exposition/types';
import {
  boundedExportString,
  countSelected,
  fmtValue,
  timeRange,
  writeChunks,
  type ExportSelection,
} from './export-util';
import type { RecordedSeries, Recording } from './types';

export type OpenMetricsOptions = ExportSelection;

export interface OpenMetricsResult {
  families: number;
  samples: number;
  /** Series left out, with the reason (a sample name that does not fit its family's type, a type clash). */
  skipped: string[];
}

/** The string form is for modest ranges; beyond this many samples use writeOpenMetricsFile. */
export const MAX_OPENMETRICS_STRING_SAMPLES = 2_000_000;

type OmType =
  'counter' | 'gauge' | 'histogram' | 'gaugehistogram' | 'summary' | 'info' | 'stateset' | 'unknown';

interface Member {
  s: RecordedSeries;
  name: string;
  /** Rank inside a MetricPoint: buckets by le, then count, sum, created. */
  order: number;
  /** le or quantile label, rendered last. */
  extra: string;
  lo: number;
  hi: number;
}

interface Group {
  labels: string;
  members: Member[];
}

interface Family {
  name: string;
  type: OmType;
  help?: string;
  groups: Map<string, Group>;
}

const NAME_OK = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_OK = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

function sanitize(name: string, ok: RegExp): string {
  if (ok.test(name)) return name;
  const s = name.replace(/[^a-zA-Z0-9_:]/g, '_');
  return /^[0-9]/.test(s) ? `_${s}` : s;
}

const escLabel = (v: string): string => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
const escHelp = (v: string): string => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

function omType(t: MetricType): OmType {
  if (t === 'untyped') return 'unknown';
  return t;
}

/** Epoch ms → OM seconds, exactly for integer milliseconds. */
export function omTimestamp(ms: number): string {
  if (Number.isInteger(ms) && ms >= 0) {
    const s = Math.floor(ms / 1000);
    const frac = ms - s * 1000;
    return frac === 0 ? String(s) : `${s}.${String(frac).padStart(3, '0').replace(/0+$/, '')}`;
  }
  return String(ms / 1000);
}

/** OM family name and sample name for a recorded series, or a reason it does not fit. */
function classify(
  s: RecordedSeries,
): { family: string; sample: string; order: number; extraKey?: string } | string {
  const type = omType(s.type);
  const fam = s.family;
  switch (type) {
    case 'counter': {
      const base = fam.endsWith('_total') ? fam.slice(0, -6) : fam;
      if (s.name === base || s.name === `${base}_total`)
        return { family: base, sample: `${base}_total`, order: 0 };
      if (s.name === `${base}_created`) return { family: base, sample: s.name, order: 1 };
      break;
    }
    case 'histogram':
    case 'gaugehistogram': {
      const g = type === 'gaugehistogram';
      if (s.name === `${fam}_bucket` && s.labels.le !== undefined)
        return { family: fam, sample: s.name, order: 0, extraKey: 'le' };
      if (s.name === `${fam}${g ? '_gcount' : '_count'}`) return { family: fam, sample: s.name, order: 1 };
      if (s.name === `${fam}${g ? '_gsum' : '_sum'}`) return { family: fam, sample: s.name, order: 2 };
      if (!g && s.name === `${fam}_created`) return { family: fam, sample: s.name, order: 3 };
      break;
    }
    case 'summary':
      if (s.name === fam && s.labels.quantile !== undefined)
        return { family: fam, sample: s.name, order: 0, extraKey: 'quantile' };
      if (s.name === `${fam}_count`) return { family: fam, sample: s.name, order: 1 };
      if (s.name === `${fam}_sum`) return { family: fam, sample: s.name, order: 2 };
      if (s.name === `${fam}_created`) return { family: fam, sample: s.name, order: 3 };
      break;
    case 'info':
      if (s.name === `${fam}_info` || s.name === fam)
        return { family: fam.replace(/_info$/, ''), sample: `${fam.replace(/_info$/, '')}_info`, order: 0 };
      break;
    default:
      if (s.name === fam) return { family: fam, sample: s.name, order: 0 };
  }
  return `${s.target} ${s.name}: sample name does not fit its ${s.type} family ${fam}`;
}

function renderLabels(labels: Record<string, string>, target: string, skipKey?: string): string {
  const parts: string[] = [];
  for (const k of Object.keys(labels).sort()) {
    if (k === skipKey) continue;
    const name = k === 'target' ? 'exported_target' : sanitize(k, LABEL_OK);
    parts.push(`${name}="${escLabel(labels[k])}"`);
  }
  parts.push(`target="${escLabel(target)}"`);
  return parts.join(',');
}

function leRank(le: string): number {
  if (le === '+Inf') return Infinity;
  const n = Number(le);
  return n === n ? n : Infinity;
}

function plan(rec: Recording, opts: OpenMetricsOptions, result: OpenMetricsResult): Family[] {
  const from = opts.fromMs ?? -Infinity;
  const to = opts.toMs ?? Infinity;
  const families = new Map<string, Family>();
  for (const s of rec.series) {
    if (opts.series && !opts.series(s)) continue;
    const [lo, hi] = timeRange(s.t, from, to);
    if (lo >= hi) continue;
    const c = classify(s);
    if (typeof c === 'string') {
      result.skipped.push(c);
      continue;
    }
    const famName = sanitize(c.family, NAME_OK);
    const type = omType(s.type);
    let fam = families.get(famName);
    if (!fam) {
      fam = { name: famName, type, help: s.help, groups: new Map() };
      families.set(famName, fam);
    } else if (fam.type !== type) {
      result.skipped.push(
        `${s.target} ${s.name}: family ${famName} is already a ${fam.type}, this series says ${type}`,
      );
      continue;
    }
    const labels = renderLabels(s.labels, s.target, c.extraKey);
    let g = fam.groups.get(labels);
    if (!g) {
      g = { labels, members: [] };
      fam.groups.set(labels, g);
    }
    const extra = c.extraKey ? `${c.extraKey}="${escLabel(s.labels[c.extraKey])}"` : '';
    g.members.push({ s, name: sanitize(c.sample, NAME_OK), order: c.order, extra, lo, hi });
  }
  for (const fam of families.values())
    for (const g of fam.groups.values())
      g.members.sort(
        (a, b) =>
          a.order - b.order ||
          (a.order === 0 && fam.type !== 'summary'
            ? leRank(a.s.labels.le ?? '') - leRank(b.s.labels.le ?? '')
            : Number(a.s.labels.quantile ?? 0) - Number(b.s.labels.quantile ?? 0)),
      );
  return [...families.values()];
}

/** Yields OpenMetrics text in chunks; fills `result` as it goes. */
export function* openMetricsChunks(
  rec: Recording,
  opts: OpenMetricsOptions = {},
  result: OpenMetricsResult = { families: 0, samples: 0, skipped: [] },
): Generator<string> {
  const families = plan(rec, opts, result);
  let out = '';
  for (const fam of families) {
    result.families++;
    out += `# TYPE ${fam.name} ${fam.type}\n`;
    if (fam.help) out += `# HELP ${fam.name} ${escHelp(fam.help)}\n`;
    for (const g of fam.groups.values()) {
      const ms = g.members;
      const pos = ms.map((m) => m.lo);
      // Merge the members' timestamps: one MetricPoint per timestamp, members in their MetricPoint order.
      for (;;) {
        let t = Infinity;
        for (let i = 0; i < ms.length; i++)
          if (pos[i] < ms[i].hi && ms[i].s.t[pos[i]] < t) t = ms[i].s.t[pos[i]];
        if (t === Infinity) break;
        const ts = omTimestamp(t);
        for (let i = 0; i < ms.length; i++) {
          const m = ms[i];
          if (pos[i] < m.hi && m.s.t[pos[i]] === t) {
            const labels = m.extra ? `${g.labels},${m.extra}` : g.labels;
            out += `${m.name}{${labels}} ${fmtValue(m.s.v[pos[i]])} ${ts}\n`;
            pos[i]++;
            result.samples++;
          }
        }
        if (out.length > 1 << 20) {
          yield out;
          out = '';
        }
      }
    }
  }
  yield out + '# EOF\n';
}

/** OpenMetrics text of the selected samples. Throws RangeError above MAX_OPENMETRICS_STRING_SAMPLES samples. */
export function exportOpenMetrics(rec: Recording, opts: OpenMetricsOptions = {}): string {
  return boundedExportString(
    openMetricsChunks(rec, opts),
    countSelected(rec, opts),
    MAX_OPENMETRICS_STRING_SAMPLES,
    { format: 'OpenMetrics', unit: 'samples' },
  );
}

/** Streams the export to `outPath` (any size; the file must not exist). */
export async function writeOpenMetricsFile(
  rec: Recording,
  opts: OpenMetricsOptions,
  outPath: string,
): Promise<OpenMetricsResult> {
  const result: OpenMetricsResult = { families: 0, samples: 0, skipped: [] };
  await writeChunks(openMetricsChunks(rec, opts, result), outPath, 'OpenMetrics export');
  return result;
}
