// Sorts a scrape's metric families into what the console reads, what a supported era has that the console does
// not chart, what no supported era lists ("not understood by this PD Console version": a newer release), and
// what other exporters on the same endpoint serve (prometheus_client's python_* / process_* collectors, a
// sidecar's families). Only the third needs the operator's eye, so only it is listed by name in the UI.
import { knownFamily } from './known-families';

export type FamilyClass = 'used' | 'known-not-used' | 'unknown' | 'other-exporter';

/**
 * The namespaces SGLang and its routers name their families in. An unlisted name inside one is a version this
 * console does not know; a name outside all of them is another exporter's, whatever it is called. `sglang_`
 * (underscore) is SGLang's /v1/loads?format=prometheus form, never served on /metrics by a known era.
 */
export const SGLANG_NAMESPACES: readonly string[] = [
  'sglang:',
  'sglang_',
  'smg_',
  'sgl_router_',
  'sgl_tokenizer_',
];

/** The words the operator sees for the unknown class (CLI and UI). */
export const NOT_UNDERSTOOD = 'not understood by this PD Console version';

/** One scrape's families by class; names sorted. Counts are the lists' lengths. */
export interface FamilyCensus {
  used: string[];
  knownNotUsed: string[];
  unknown: string[];
  otherExporters: string[];
}

export function inSglangNamespace(name: string): boolean {
  return SGLANG_NAMESPACES.some((p) => name.startsWith(p));
}

/**
 * `isUsed`: the console reads the family (a signal, KV or health source). A family the console reads counts
 * as used even where the inventory lacks it, since the console plainly understands it.
 */
export function familyClass(name: string, isUsed: (name: string) => boolean): FamilyClass {
  if (isUsed(name)) return 'used';
  // OpenMetrics names a counter family without the _total the inventory lists.
  if (knownFamily(name) ?? knownFamily(`${name}_total`)) return 'known-not-used';
  return inSglangNamespace(name) ? 'unknown' : 'other-exporter';
}

export function familyCensus(names: Iterable<string>, isUsed: (name: string) => boolean): FamilyCensus {
  const c: FamilyCensus = { used: [], knownNotUsed: [], unknown: [], otherExporters: [] };
  const list = {
    used: c.used,
    'known-not-used': c.knownNotUsed,
    unknown: c.unknown,
    'other-exporter': c.otherExporters,
  };
  for (const n of new Set(names)) list[familyClass(n, isUsed)].push(n);
  for (const l of Object.values(c)) l.sort();
  return c;
}
