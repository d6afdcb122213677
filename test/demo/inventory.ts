// The upstream metric inventory (../shared/reference/upstream/*.tsv, read from the SGLang and smg source) per
// era, and the check that an exposition emits nothing that era's code does not. Shared by the demo's
// inventory test and the fixture test. The TSVs are read in place at test time, never copied.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DemoEra, RouterEra } from '../../src/main/demo/eras';
import type { Exposition } from '../../src/main/core/probes/exposition/types';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const UPSTREAM = resolve(REPO_ROOT, '../shared/reference/upstream');
const SERVER_TSV = resolve(UPSTREAM, 'sglang-real-metrics.tsv');
const ROUTER_TSV = resolve(UPSTREAM, 'router-real-metrics.tsv');
export const inventoryAvailable = existsSync(SERVER_TSV) && existsSync(ROUTER_TSV);
export const SKIP_MESSAGE =
  `upstream metric inventory skipped: ${UPSTREAM} does not exist. The TSVs are read from ` +
  '../shared/reference/upstream next to the repository and are not part of a clone; check out the shared ' +
  'reference folder there to run this test.';

export type Era = DemoEra | RouterEra;

/** What one era's code can emit under one family name. */
export interface InventoryEntry {
  name: string;
  type: string;
  /** Every label a sample of this family may carry (histogram `le` included). */
  labels: ReadonlySet<string>;
  /** Where the TSV says it is defined, for failure messages. */
  where: string;
}

export type Inventory = Map<string, InventoryEntry>;

interface Row {
  cols: string[];
  section: string;
}

function rows(path: string): Row[] {
  const out: Row[] = [];
  let section = 'head';
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (line.startsWith('# ---')) section = line;
    if (!line.trim() || line.startsWith('#')) continue;
    out.push({ cols: line.split('\t'), section });
  }
  return out;
}

// ------------------------------------------------------------------------------------------ server

const SERVER_ERAS: readonly DemoEra[] = ['E1', 'E2', 'E3', 'E4'];

/**
 * Which eras a server family exists in, from the TSV's era/notes column (commits: E1 @93d04878, E2
 * @44cedc2b, E3 @00eef542, E4 @016d8605). The notes are prose; these rules read them, and the overrides
 * cover the rows whose notes need the README's era table to decide.
 */
const SERVER_ERA_OVERRIDES: Record<string, readonly DemoEra[]> = {
  // "present @016d8605 and used in scheduler_metrics_mixin@00eef542; absent @44cedc2b and @93d04878"
  'sglang:full_token_usage': ['E3', 'E4'],
  // "newest: set once via emit_constants; @44cedc2b: set every log_stats; ABSENT @93d04878"
  'sglang:max_total_num_tokens': ['E2', 'E3', 'E4'],
  // "old name (still used by scheduler_metrics_mixin@00eef542)"; E4 has the bootstrap name
  'sglang:num_prefill_prealloc_queue_reqs': ['E1', 'E2', 'E3'],
  // "older name" @44cedc2b; E3 is not known from the inventory, so neither name is allowed there
  'sglang:gpu_execution_seconds_total': ['E2'],
};

function serverEras(name: string, notes: string): readonly DemoEra[] {
  const o = SERVER_ERA_OVERRIDES[name];
  if (o) return o;
  if (/ABSENT @016d8605/.test(notes)) return ['E1', 'E2', 'E3'];
  if (/present @44cedc2b|absent @93d04878/i.test(notes)) return ['E2', 'E3', 'E4'];
  if (/^newest|newest only/.test(notes)) return ['E4'];
  return SERVER_ERAS;
}

/** kv_transfer_* were gauges at @93d04878 and @44cedc2b ("GAUGE @…" in the notes), histograms from E3. */
function serverType(typeCol: string, notes: string, era: DemoEra): string {
  const base = typeCol.split(/[\s(]/)[0];
  if (/GAUGE @/.test(notes) && (era === 'E1' || era === 'E2')) return 'gauge';
  return base;
}

/** SCHED / TOK label macros of the TSV header, per era. */
function macroLabels(macro: string, era: DemoEra): string[] | null {
  if (macro === 'SCHED') {
    // @01bb3c80 mixin (E1): {model_name, engine_type="unified", tp_rank, pp_rank, [dp_rank]};
    // @44cedc2b on: + moe_ep_rank and priority (priority scheduling only).
    const l = ['model_name', 'engine_type', 'tp_rank', 'pp_rank', 'dp_rank'];
    return era === 'E1' ? l : [...l, 'moe_ep_rank', 'priority'];
  }
  if (macro === 'TOK') {
    // Stored tokenizer_manager.py versions: {model_name}; newest: + engine_type, [priority].
    return era === 'E4' ? ['model_name', 'engine_type', 'priority'] : ['model_name'];
  }
  return null;
}

function serverLabels(labelCol: string, notes: string, era: DemoEra): string[] | null {
  if (/^stage \(bootstrap\|transfer\) ONLY/.test(labelCol)) return ['stage'];
  const m = /^(SCHED|TOK)(\(\+([a-z_,]+)\)|\+([a-z_+]+))?$/.exec(labelCol);
  if (!m) return null; // STORAGE, RADIX, ENC, layer: families the demo deliberately omits
  const base = macroLabels(m[1], era) ?? [];
  const extra = (m[3] ?? m[4] ?? '').split(/[+,]/).filter(Boolean);
  // "…; @93d04878 TOK only": the extra labels (is_streaming, cache_source) are the newest code's.
  if (/@93d04878 TOK only/.test(notes) && era !== 'E4') return base;
  return [...base, ...extra];
}

export function serverInventory(era: DemoEra): Inventory {
  const inv: Inventory = new Map();
  for (const { cols } of rows(SERVER_TSV)) {
    const [name, type, labelCol, where, , notes = ''] = cols;
    if (!serverEras(name, notes).includes(era)) continue;
    const t = serverType(type, notes, era);
    const labels = serverLabels(labelCol, notes, era);
    inv.set(name, {
      name,
      type: t,
      labels: new Set([
        ...(labels ?? ['<unknown label macro ' + labelCol + '>']),
        ...(t.includes('histogram') ? ['le'] : []),
      ]),
      where: `sglang-real-metrics.tsv: ${name} ${where.split(' ')[0]}`,
    });
  }
  return inv;
}

// ------------------------------------------------------------------------------------------ router

function routerRows(section: 'head' | '0.3.0' | '0.2.4'): Row[] {
  return rows(ROUTER_TSV).filter((r) =>
    section === 'head' ? r.section === 'head' : r.section.includes(`${section} release`),
  );
}

function routerEntry(r: Row, labelsFrom?: Row): InventoryEntry {
  const [name, type, labelCol, where] = (labelsFrom ?? r).cols;
  const labels = labelCol === '-' ? [] : labelCol.split(',');
  return {
    name,
    type,
    labels: new Set([...labels, ...(type === 'histogram' ? ['le'] : [])]),
    where: `router-real-metrics.tsv: ${name} ${where}`,
  };
}

/**
 * 0.2.4 and 0.3.0 are release sections of the TSV. smg 1.5 is not: the families it surely has are those of
 * 0.3.0 still present at HEAD, with HEAD's labels (the README: `path` on smg_http_responses_total from
 * v1.5.0). A family only HEAD lists may be younger than 1.5, so it is not allowed in 'smg-1.5'.
 * --engine-metrics (v1.7) adds HEAD's smg_engine_* gauges.
 */
export function routerInventory(era: RouterEra): Inventory {
  const inv: Inventory = new Map();
  if (era === 'sglang-router-0.2.4') {
    // A PD router: the rows the TSV marks regular-router-only or never recorded are not its metrics.
    for (const r of routerRows('0.2.4'))
      if (!/ONLY regular router|describe only/.test(r.cols[5] ?? '')) inv.set(r.cols[0], routerEntry(r));
    return inv;
  }
  if (era === 'smg-0.3') {
    for (const r of routerRows('0.3.0')) inv.set(r.cols[0], routerEntry(r));
    return inv;
  }
  const head = new Map(routerRows('head').map((r) => [r.cols[0], r]));
  for (const r of routerRows('0.3.0')) {
    const h = head.get(r.cols[0]);
    if (h) inv.set(r.cols[0], routerEntry(h));
  }
  if (era === 'smg-engine-metrics') {
    for (const [name, r] of head) if (name.startsWith('smg_engine_')) inv.set(name, routerEntry(r));
  }
  return inv;
}

export function inventoryOf(era: Era): Inventory {
  return era.startsWith('E') ? serverInventory(era as DemoEra) : routerInventory(era as RouterEra);
}

// ------------------------------------------------------------------------------------------ check

/**
 * Every family and label in `exp` that `era`'s code does not emit, one message each (empty when clean).
 * `what` names the source (a port, a fixture file) in the messages.
 */
export function inventoryViolations(exp: Exposition, era: Era, what: string): string[] {
  const inv = inventoryOf(era);
  const out: string[] = [];
  for (const fam of exp.families) {
    const entry = inv.get(fam.name);
    if (!entry) {
      out.push(`${what}: ${fam.name} (${fam.type}) is not in the ${era} inventory`);
      continue;
    }
    if (fam.type !== entry.type)
      out.push(`${what}: ${fam.name} is a ${fam.type}, ${era} has a ${entry.type} (${entry.where})`);
    const extra = new Set<string>();
    for (const s of fam.samples)
      for (const l of Object.keys(s.labels)) if (!entry.labels.has(l)) extra.add(l);
    if (extra.size)
      out.push(
        `${what}: ${fam.name} carries label(s) ${[...extra].join(', ')} that ${era} does not set ` +
          `(allowed: ${[...entry.labels].join(', ') || 'none'}; ${entry.where})`,
      );
  }
  return out;
}
